package natsbridge

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/wsfan/wsfan/pkg/client"
)

func TestPositionAdvance(t *testing.T) {
	type step struct {
		epoch, seq uint64
		v          verdict
		step       uint64
		flags      client.Flags
	}
	var p position
	for i, s := range []step{
		{epoch: 7, seq: 40, v: accept, step: 1},                                // first: from the last value
		{epoch: 7, seq: 40, v: duplicate},                                      // its live copy
		{epoch: 7, seq: 41, v: accept, step: 1},                                // next
		{epoch: 7, seq: 44, v: accept, step: 3, flags: client.FlagGap},         // two lost
		{epoch: 7, seq: 43, v: duplicate},                                      // late, already passed
		{epoch: 9, seq: 1, v: accept, step: 1, flags: client.FlagReconnected},  // new leader
		{epoch: 7, seq: 45, v: stale},                                          // the old leader's backlog
		{epoch: 9, seq: 2, v: accept, step: 1},                                 // new leader goes on
		{epoch: 12, seq: 5, v: accept, step: 1, flags: client.FlagReconnected}, // another, joined late
	} {
		v, st, fl := p.advance(s.epoch, s.seq)
		assert.Equal(t, s.v, v, "step %d", i)
		assert.Equal(t, s.step, st, "step %d", i)
		assert.Equal(t, s.flags, fl, "step %d", i)
	}
	assert.Equal(t, position{epoch: 12, seq: 5}, p)
}

// The cached last value may lag: the first live message after it moves
// the counter by one and is not a gap; the next jump is.
func TestPositionAfterCachedValue(t *testing.T) {
	p := position{epoch: 3, seq: 10, cached: true}
	v, step, flags := p.advance(3, 13)
	assert.Equal(t, accept, v)
	assert.Equal(t, uint64(1), step)
	assert.Zero(t, flags)
	v, step, flags = p.advance(3, 15)
	assert.Equal(t, accept, v)
	assert.Equal(t, uint64(2), step)
	assert.Equal(t, client.FlagGap, flags)

	p = position{epoch: 3, seq: 10, cached: true}
	v, _, _ = p.advance(3, 10)
	assert.Equal(t, duplicate, v, "the live copy of the cached value")
	assert.True(t, p.cached, "still waiting for the first live message")
}
