package client

// Inlet feeds a Subscription that no connection of this package feeds: a
// stream read from elsewhere (natsbridge reads a group's from NATS) is
// delivered through the same engine as every subscription of a Client,
// with its buffer, overflow policy, byte limit, slow-consumer episodes
// and Seq. The Subscription's consumer reads it as any other; the
// inlet's owner delivers into it from one goroutine at a time (the
// deliveries of several goroutines are serialized) and ends it.
type Inlet struct{ s *Subscription }

// inletSlots is the most slots an Inlet's channel has. A stream read from
// elsewhere comes in bursts another hop has gathered already (natsbridge:
// 256 messages in BenchmarkFanout), which a 64-slot channel would hand to
// the mover goroutine each time (-11 % deliveries/s there, p=0.000), so
// up to 1,024 of its buffer are allocated up front.
const inletSlots = 1024

// NewInlet returns an inlet feeding a new Subscription to topics, under
// opts (Buffer 1024, Overflow DropOldest, PendingBytes 64 MiB and Grace
// 20 ms by default, as a Client's). Up to 1,024 messages of its buffer are
// allocated up front, in its channel; the rest only while its consumer is
// behind. The consumer's Unsubscribe ends it.
func NewInlet(topics []string, opts ...DeliveryOption) *Inlet {
	sc := subConfig{buffer: 1024, overflow: DropOldest, pendingBytes: 64 << 20, grace: DefaultGrace}
	for _, o := range opts {
		o.applySubscription(&sc)
	}
	sc.buffer = max(sc.buffer, 1)
	sc.pendingBytes = max(sc.pendingBytes, 0)
	return &Inlet{s: newSubscription(nil, append([]string(nil), topics...), sc, inletSlots)}
}

// Subscription is the subscription the inlet feeds.
func (in *Inlet) Subscription() *Subscription { return in.s }

// Capacity is the subscription's buffer, in messages.
func (in *Inlet) Capacity() int { return in.s.capacity }

// Deliver hands m to the subscription under its overflow policy, which
// waits for the consumer only under Block (the others lend room for the
// subscription's Grace, then drop or end); step is how far Seq moves: 1, or more over messages known lost
// before they reached the subscription. It reports whether m was queued,
// and whether the subscription has ended (its consumer too slow under
// CloseSubscription, an End, or its consumer's Unsubscribe).
func (in *Inlet) Deliver(m Message, step uint64) (queued, ended bool) {
	return in.s.deliverStep(m, step, 0)
}

// Ended reports whether the subscription has ended.
func (in *Inlet) Ended() bool {
	in.s.mu.Lock()
	defer in.s.mu.Unlock()
	return in.s.ended
}

// Drop counts n messages lost before they reached the subscription, in
// its Dropped.
func (in *Inlet) Drop(n uint64) { in.s.countDrops(n) }

// End ends the subscription with err (nil: cleanly) and reports whether
// this call ended it. Safe from any goroutine, more than once.
func (in *Inlet) End(err error) bool {
	s := in.s
	s.endOnce.Do(func() { close(s.quit) }) // first: releases a Block-policy wait
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return false
	}
	s.endLocked(err)
	return true
}
