package client

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/wsfan/wsfan/pkg/protocol"
)

// Resyncs asked one after another wait 0, 1, 2, 4, 8, 16 s, then 30 s
// each; after a quiet spell the next goes at once and the streak starts
// over. A dialect that does not space them never waits.
func TestRepeatedResyncsBackOff(t *testing.T) {
	// A venue that spaces repeated resyncs 1 s doubling to 30 s, as
	// Kraken does.
	c := &Client{venue: protocol.Venue{Resync: protocol.Backoff{First: time.Second, Most: 30 * time.Second}}}
	ts := new(topicState)
	now := time.Unix(1_000, 0)
	var waits []time.Duration
	for range 8 {
		w := c.resyncPause(ts, now)
		waits = append(waits, w)
		now = now.Add(w + 200*time.Millisecond) // the snapshot failed again
	}
	s := time.Second
	assert.Equal(t, []time.Duration{0, s, 2 * s, 4 * s, 8 * s, 16 * s, 30 * s, 30 * s}, waits)

	now = now.Add(2 * time.Minute)
	assert.Zero(t, c.resyncPause(ts, now), "after a quiet spell: at once")
	assert.Equal(t, s, c.resyncPause(ts, now.Add(time.Second)), "a new streak")

	plain, pts := &Client{}, new(topicState)
	assert.Zero(t, plain.resyncPause(pts, now))
	assert.Zero(t, plain.resyncPause(pts, now), "not spaced")
}
