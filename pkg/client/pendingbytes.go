package client

// pendingBytes counts the bytes of message data waiting in a
// subscription's channel without any help from the consumer. A channel
// always holds the last len(ch) messages pushed into it (the consumer and
// a DropOldest reader only take the oldest), so the reader keeps a ring
// of cumulative pushed byte counts, one more than the channel's capacity:
// the pending bytes are cum[pushed] - cum[pushed-len(ch)]. O(1), and only
// the reader goroutine touches it (under Subscription.mu).
type pendingBytes struct {
	limit int      // 0: unbounded, nothing is counted
	cum   []uint64 // cum[head] is the total pushed so far
	head  int
}

func newPendingBytes(capacity, limit int) pendingBytes {
	if limit <= 0 {
		return pendingBytes{}
	}
	return pendingBytes{limit: limit, cum: make([]uint64, capacity+1)}
}

// bytes returns the bytes of the n messages now in the channel.
func (p *pendingBytes) bytes(n int) uint64 {
	tail := p.head - n
	if tail < 0 {
		tail += len(p.cum)
	}
	return p.cum[p.head] - p.cum[tail]
}

// fits reports whether a message of size bytes may join the n in the
// channel: always when the channel is empty, so an oversized message
// still goes through.
func (p *pendingBytes) fits(n, size int) bool {
	return p.limit == 0 || n == 0 || p.bytes(n)+uint64(size) <= uint64(p.limit)
}

// atMostHalf reports whether the n messages now in the channel hold at
// most half the limit.
func (p *pendingBytes) atMostHalf(n int) bool {
	return p.limit == 0 || p.bytes(n) <= uint64(p.limit)/2
}

// push records a message of size bytes sent into the channel.
func (p *pendingBytes) push(size int) {
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
