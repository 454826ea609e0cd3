package client

import "time"

// resyncPause is how long a refresh of ts asked at now waits, for a
// venue that spaces repeated resyncs (protocol.Venue.Resync): nothing
// for the first one, or one after a quiet spell longer than the last
// wait plus the longest; else the back-off, which doubles for the next
// up to the longest. It records the refresh as going out after the
// pause. Runs on ts's refresh goroutine, one at a time.
func (c *Client) resyncPause(ts *topicState, now time.Time) time.Duration {
	first, most := c.venue.Resync.First, c.venue.Resync.Most
	if first <= 0 {
		return 0
	}
	last, wait := ts.lastResync.Load(), time.Duration(ts.resyncWait.Load())
	if last == 0 || now.Sub(time.Unix(0, last)) > wait+most {
		wait = 0 // a new streak
	}
	next := first
	if wait > 0 {
		next = min(2*wait, most)
	}
	ts.resyncWait.Store(int64(next))
	ts.lastResync.Store(now.Add(wait).UnixNano())
	return wait
}
