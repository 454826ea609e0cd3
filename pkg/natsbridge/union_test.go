package natsbridge

import (
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// following records what the union asks the leader to follow.
type following struct {
	on  map[string]bool
	ops []string
}

func (f *following) set(topic string, on bool) {
	if f.on == nil {
		f.on = make(map[string]bool)
	}
	if on {
		f.on[topic] = true
		f.ops = append(f.ops, "+"+topic)
	} else {
		delete(f.on, topic)
		f.ops = append(f.ops, "-"+topic)
	}
}

func (f *following) topics() []string { return slices.Sorted(maps.Keys(f.on)) }

func TestUnionFollowsWhatAnyMemberWants(t *testing.T) {
	var f following
	grace, ttl := 5*time.Second, 15*time.Second
	u := newUnion(grace, ttl, f.set)
	t0 := time.Unix(1000, 0)

	u.update("a", []string{"x", "y"}, t0)
	u.update("b", []string{"y", "z"}, t0)
	assert.Equal(t, []string{"x", "y", "z"}, f.topics())
	assert.Len(t, f.ops, 3, "y is followed once")

	// b drops y: a still wants it. a drops x: nobody does, but x stays
	// for the grace period.
	u.update("b", []string{"z"}, t0.Add(time.Second))
	u.update("a", []string{"y"}, t0.Add(time.Second))
	u.sweep(t0.Add(time.Second + grace - time.Millisecond))
	assert.Equal(t, []string{"x", "y", "z"}, f.topics())

	// Wanted again within the grace: never unfollowed.
	u.update("b", []string{"z", "x"}, t0.Add(2*time.Second))
	u.sweep(t0.Add(2*time.Second + grace))
	assert.Equal(t, []string{"x", "y", "z"}, f.topics())
	assert.Len(t, f.ops, 3)

	// b leaves: x and z go after the grace, y stays.
	u.remove("b", t0.Add(3*time.Second))
	u.sweep(t0.Add(3*time.Second + grace))
	assert.Equal(t, []string{"y"}, f.topics())
}

func TestUnionForgetsSilentMembers(t *testing.T) {
	var f following
	grace, ttl := time.Second, 15*time.Second
	u := newUnion(grace, ttl, f.set)
	t0 := time.Unix(1000, 0)
	u.update("a", []string{"x"}, t0)
	u.update("b", []string{"y"}, t0)
	u.update("b", []string{"y"}, t0.Add(10*time.Second)) // b refreshes, a does not

	u.sweep(t0.Add(ttl))         // a expires: x idle
	u.sweep(t0.Add(ttl + grace)) // and unfollowed
	assert.Equal(t, []string{"y"}, f.topics())
	u.sweep(t0.Add(10*time.Second + ttl)) // b too
	u.sweep(t0.Add(10*time.Second + ttl + grace))
	assert.Empty(t, f.topics())
}
