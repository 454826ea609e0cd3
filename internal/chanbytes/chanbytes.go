// Package chanbytes counts the bytes of data waiting in a channel
// without any help from its consumer. A channel always holds the last
// len(ch) values pushed into it (the consumer, and a sender dropping the
// oldest, only take the oldest), so the sender keeps a ring of
// cumulative pushed byte counts, one more than the channel's capacity:
// the pending bytes are cum[pushed] - cum[pushed-len(ch)]. O(1).
package chanbytes

// Counter is the ring of one channel. Only the channel's sender touches
// it (a subscription's, under Subscription.mu).
type Counter struct {
	limit int      // 0: unbounded, nothing is counted
	cum   []uint64 // cum[head] is the total pushed so far
	head  int
}

// New returns the Counter of a channel of capacity values, bounded to
// limit bytes; limit 0 (or less) counts nothing and bounds nothing.
func New(capacity, limit int) Counter {
	if limit <= 0 {
		return Counter{}
	}
	return Counter{limit: limit, cum: make([]uint64, capacity+1)}
}

// Limit is the bound in bytes, 0 when unbounded.
func (p *Counter) Limit() int { return p.limit }

// Bytes returns the bytes of the n values now in the channel.
func (p *Counter) Bytes(n int) uint64 {
	tail := p.head - n
	if tail < 0 {
		tail += len(p.cum)
	}
	return p.cum[p.head] - p.cum[tail]
}

// Fits reports whether a value of size bytes may join the n in the
// channel: always when the channel is empty, so an oversized value
// still goes through.
func (p *Counter) Fits(n, size int) bool {
	return p.limit == 0 || n == 0 || p.Bytes(n)+uint64(size) <= uint64(p.limit)
}

// AtMostHalf reports whether the n values now in the channel hold at
// most half the limit.
func (p *Counter) AtMostHalf(n int) bool {
	return p.limit == 0 || p.Bytes(n) <= uint64(p.limit)/2
}

// Push records a value of size bytes sent into the channel.
func (p *Counter) Push(size int) {
	if p.limit == 0 {
		return
	}
	next := p.head + 1
	if next == len(p.cum) {
		next = 0
	}
	p.cum[next] = p.cum[p.head] + uint64(size)
	p.head = next
}
