package client

import (
	"time"
	"unsafe"
)

// A composite whose connections carry the same subscriptions side by
// side (package standby) reads every notification once on each of them.
// A CopyFilter lets it drop, on a connection's reader and before the
// frame is classified, a copy of a notification another connection has
// delivered already, so that the copy costs a hash and a look-up rather
// than a parse, a route and a merge.

// A Copy is a notification a CopyFilter dropped, as the connection that
// delivered it first read it: its topic (a name the client holds) and,
// when Placed, its place there (the change id of a sequenced topic, the
// height of a backfilling one's head). The client's record of the topic
// moves on as if it had delivered the frame itself: its rhythm
// (WithStaleAfter) and its last place, so that the next message it does
// deliver follows on without a gap.
type Copy struct {
	Topic  string
	Place  uint64
	Placed bool
}

// CopyFilter is called on a connection's reader with every text frame,
// before it is classified (after a sidecar's stamps are cut: WithStamps),
// and the time it was read. It returns true to drop the frame, with
// what the frame was. It must not keep the frame, which the reader
// reuses, and must be safe for the readers of successive connections.
type CopyFilter func(frame []byte, now time.Time) (Copy, bool)

// WithCopyFilter has each of the client's connections offer every text
// frame to f before classifying it, and drop those f takes (CopyFilter):
// a composite's leg drops there what another leg delivered. Frames f
// drops are counted as read (Stats) and delivered to no one. Default:
// none.
func WithCopyFilter(f CopyFilter) Option {
	return clientOption(func(c *config) { c.copyFilter = f })
}

// tookCopy moves the client's record of a topic on past a copy its
// CopyFilter dropped (see Copy). Runs on the reader goroutine, which owns
// the topic's lastID and cn.copyTopic: the topic of the last copy, kept
// while it has subscriptions (a topic left has none, for good, and one
// subscribed again is a new topicState), so that a leg's copies of one
// topic take c.mu once, not once each.
func (cn *conn) tookCopy(cp Copy, now time.Time) {
	c := cn.c
	ts := cn.copyTopic
	if ts == nil || ts.name != cp.Topic || ts.subs.Load() == nil {
		c.mu.Lock()
		ts = c.topics.get(cp.Topic)
		c.mu.Unlock()
		cn.copyTopic = ts
		if ts == nil {
			return
		}
	}
	if every := c.cadenceEvery; every >= 0 {
		ts.cadence.Observe(now.UnixNano(), every)
	}
	if !cp.Placed {
		return
	}
	switch {
	case ts.topic.Sequenced:
		ts.lastID = cp.Place
	case ts.topic.Backfill && !ts.topic.Retracts:
		ts.rec.SetPlace(cp.Place)
	}
}

// unread gives the read slab back the bytes of frame, the frame just
// read, which nothing keeps (a copy the CopyFilter dropped): the next
// frame is read over them, so a leg's copies cost no slab. A frame read
// into a buffer of its own (one over the slab's free tail) is left to
// the collector. Runs on the reader goroutine, which owns the slab.
func (cn *conn) unread(frame []byte) {
	n := len(frame)
	if n == 0 || len(cn.slab) == 0 {
		return
	}
	start := unsafe.SliceData(frame)
	if unsafe.Add(unsafe.Pointer(start), n) != unsafe.Pointer(unsafe.SliceData(cn.slab)) {
		return
	}
	cn.slab = unsafe.Slice(start, n+len(cn.slab))
}
