package client

import (
	"time"

	"go.uber.org/zap"
)

// A topic can go silent while its connection is fine: the server lost
// the subscription, or its feed behind the subscription stalled. Pings
// cannot see that; the topic's own rhythm can. The reader notes when each
// message of a topic arrives (cadence.Rhythm.Observe); the supervisor checks
// every topic once a second (checkStale). A topic silent for staleFactor
// times its median interval, and at least staleFloor, while another topic
// of the connection received messages after that point, is stale: a Stale
// event, wsfan_client_stale_total, and one resubscribe, so the server
// sends it afresh; its next message is flagged FlagStale. It is checked
// again only after a message arrived.

// staleCheckEvery is how often the supervisor looks for stale topics.
const staleCheckEvery = time.Second

// silence is how long the topic has been silent on the connection up
// since upSince (unix ns), and the silence that makes it stale: 0 when
// it has no rhythm yet.
func (c *Client) silence(ts *topicState, now, upSince int64) (silent, limit time.Duration) {
	median := ts.cadence.Median()
	if median == 0 || c.cfg.staleFactor <= 0 {
		return 0, 0
	}
	since := max(ts.cadence.Last(), upSince)
	return time.Duration(now - since), max(time.Duration(c.cfg.staleFactor)*median, c.cfg.staleFloor)
}

// checkStale finds the stale topics of the current connection and
// resubscribes each. Runs on the supervisor goroutine.
func (c *Client) checkStale(now time.Time) {
	if c.cfg.staleFactor <= 0 || c.conn.Load() == nil {
		return
	}
	upSince := c.upSince.Load()
	c.mu.Lock()
	all := c.topics.all()
	var newest int64
	for _, ts := range all {
		newest = max(newest, ts.cadence.Last())
	}
	var stale []*topicState
	nowNs := now.UnixNano()
	for _, ts := range all {
		silent, limit := c.silence(ts, nowNs, upSince)
		if limit == 0 || !ts.confirmed || ts.cadence.IsStale() || silent <= limit {
			continue
		}
		// The silence began at nowNs-silent; another topic flowed after
		// it had grown too long.
		if newest-(nowNs-int64(silent)) > int64(limit) {
			ts.cadence.Judge()
			stale = append(stale, ts)
		}
	}
	c.mu.Unlock()
	for _, ts := range stale {
		c.stats.stale.Add(1)
		c.log.Warn("topic silent while others flow; resubscribing",
			zap.String("topic", ts.name), zap.Duration("median_interval", ts.cadence.Median()))
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
	return ts != nil && ts.cadence.IsStale()
}

// Silent reports whether topic has been silent for longer than its stale
// limit (WithStaleAfter), whether or not other topics flow: what a
// readiness check asks of every topic at once. False for a topic not
// held, one without a rhythm yet (16 intervals), and while disconnected.
func (c *Client) Silent(topic string) bool {
	if c.conn.Load() == nil {
		return false
	}
	c.mu.Lock()
	ts := c.topics.get(topic)
	c.mu.Unlock()
	if ts == nil {
		return false
	}
	silent, limit := c.silence(ts, time.Now().UnixNano(), c.upSince.Load())
	return limit > 0 && silent > limit
}
