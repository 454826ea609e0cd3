package natsbridge

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// The first of each run of late messages starts a run; a message on
// time ends it; one without a stamp is never late, and 0 turns it off.
func TestLatenessMarksTheFirstOfARun(t *testing.T) {
	now := time.Unix(1000, 0)
	age := func(d time.Duration) int64 { return now.Add(-d).UnixNano() }
	var l lateness
	var got []bool
	for _, recv := range []int64{age(0), age(2 * time.Second), age(3 * time.Second), age(10 * time.Millisecond), 0, age(time.Minute), age(time.Second)} {
		got = append(got, l.mark(recv, now, time.Second))
	}
	assert.Equal(t, []bool{false, true, false, false, false, true, false}, got)
	assert.False(t, new(lateness).mark(age(time.Hour), now, 0), "off")
	assert.False(t, new(lateness).mark(age(time.Second), now, time.Second), "exactly the bound is on time")
}
