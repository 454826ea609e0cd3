package client

import (
	"slices"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
)

// A topic can go silent while its connection is fine: the server lost
// the subscription, or its feed behind the subscription stalled. Pings
// cannot see that; the topic's own rhythm can. The reader notes when each
// message of a topic arrives (cadence.observe); the supervisor checks
// every topic once a second (checkStale). A topic silent for staleFactor
// times its median interval, and at least staleFloor, while another topic
// of the connection received messages after that point, is stale: a Stale
// event, wsfan_client_stale_total, and one resubscribe, so the server
// sends it afresh; its next message is flagged FlagStale. It is checked
// again only after a message arrived.

// staleCheckEvery is how often the supervisor looks for stale topics.
const staleCheckEvery = time.Second

// cadenceSamples is how many intervals of a topic the median is taken
// over; a topic is judged once it has them all.
const cadenceSamples = 16

// cadence is the arrival rhythm of one topic. The reader goroutine is its
// only writer; the supervisor reads it with atomics.
type cadence struct {
	last      atomic.Int64 // unix ns of the last message
	intervals [cadenceSamples]atomic.Int64
	n         atomic.Uint32 // intervals recorded, saturating past the ring's size
	next      uint32        // the ring slot written next; reader-owned
	judged    atomic.Int64  // last+1 when the topic was last found stale: judged once per silence
}

// isStale reports whether the topic was found stale and no message came
// since.
func (k *cadence) isStale() bool { return k.judged.Load() == k.last.Load()+1 }

// observe records a message arriving at now. Runs on the reader goroutine.
func (k *cadence) observe(now int64) {
	if prev := k.last.Load(); prev != 0 {
		k.intervals[k.next].Store(now - prev)
		k.next = (k.next + 1) % cadenceSamples
		if k.n.Load() < cadenceSamples {
			k.n.Add(1)
		}
	}
	k.last.Store(now)
}

// median is the median interval, or 0 before cadenceSamples of them.
func (k *cadence) median() time.Duration {
	if k.n.Load() < cadenceSamples {
		return 0
	}
	var v [cadenceSamples]int64
	for i := range v {
		v[i] = k.intervals[i].Load()
	}
	slices.Sort(v[:])
	return time.Duration(v[cadenceSamples/2])
}

// restart forgets the rhythm's timing across a reconnect: the interval
// spanning the outage is not one of the topic's. Called by the
// supervisor while no reader runs.
func (k *cadence) restart() {
	k.last.Store(0)
	k.judged.Store(0)
}

// checkStale finds the stale topics of the current connection, up since
// upSince, and resubscribes each. Runs on the supervisor goroutine.
func (c *Client) checkStale(now time.Time, upSince time.Time) {
	factor, floor := c.cfg.staleFactor, c.cfg.staleFloor
	if factor <= 0 || c.conn.Load() == nil {
		return
	}
	c.mu.Lock()
	all := c.topics.all()
	var newest int64
	for _, ts := range all {
		newest = max(newest, ts.cadence.last.Load())
	}
	var stale []*topicState
	for _, ts := range all {
		median := ts.cadence.median()
		last := ts.cadence.last.Load()
		if median == 0 || !ts.confirmed || ts.cadence.isStale() {
			continue
		}
		limit := max(time.Duration(factor)*median, floor)
		since := max(last, upSince.UnixNano())
		if now.UnixNano()-since > int64(limit) && newest-since > int64(limit) {
			ts.cadence.judged.Store(last + 1)
			stale = append(stale, ts)
		}
	}
	c.mu.Unlock()
	for _, ts := range stale {
		c.stats.stale.Add(1)
		c.log.Warn("topic silent while others flow; resubscribing",
			zap.String("topic", ts.name), zap.Duration("median_interval", ts.cadence.median()))
		c.emit(Event{Kind: Stale, Topic: ts.name})
		ts.stale.Store(true)
		c.refreshTopic(ts)
	}
}

// Stale reports whether topic was found stale (WithStaleAfter) and no
// message of it arrived since; false for a topic not held.
func (c *Client) Stale(topic string) bool {
	c.mu.Lock()
	ts := c.topics.get(topic)
	c.mu.Unlock()
	return ts != nil && ts.cadence.isStale()
}
