package client

import "time"

// SubscribeOption configures one subscription; pass it to Subscribe after
// the topics. Without one, a subscription takes the client's defaults.
type SubscribeOption interface{ applySubscription(*subConfig) }

// subConfig is one subscription's delivery settings.
type subConfig struct {
	buffer       int
	overflow     OverflowPolicy
	pendingBytes int
	grace        time.Duration

	// sink, when set, takes the subscription's messages in place of its
	// channel, on the goroutine delivering them (a standby's part: its
	// leg's reader), and sinkEnd is told once why the subscription
	// ended; sinkWaits: sink may wait for a consumer (SinkTo).
	sink      Sink
	sinkEnd   func(part *Subscription, err error)
	sinkWaits bool
}

// sinkTo is the option of a subscription whose messages go to sink, not
// to a channel, and whose end is told to end (see subConfig.sink).
type sinkTo struct {
	sink  Sink
	end   func(part *Subscription, err error)
	waits bool
}

func (o sinkTo) applySubscription(s *subConfig) {
	s.sink, s.sinkEnd, s.sinkWaits = o.sink, o.end, o.waits
}

// DeliveryOption is one of a subscription's delivery settings (Buffer,
// Overflow, PendingBytes, Grace). It is both an Option and a SubscribeOption:
// given to Dial it sets every subscription's default, given to Subscribe
// that subscription's alone.
type DeliveryOption struct{ set func(*subConfig) }

func (o DeliveryOption) applyClient(c *config)          { o.set(&c.delivery) }
func (o DeliveryOption) applySubscription(s *subConfig) { o.set(s) }

// Buffer sets how many messages may wait for the subscription's consumer.
// The first 64 wait in the channel (C), allocated up front, about 90
// bytes a message; the rest beside it, allocated only while the consumer
// is behind and let go once it caught up, then handed into the channel in
// order by a goroutine that runs only meanwhile. Default: 1024.
func Buffer(n int) DeliveryOption {
	return DeliveryOption{func(s *subConfig) { s.buffer = n }}
}

// Overflow sets what happens when the subscription's buffer is full, or
// its pending bytes are over the limit, after the consumer had its chance
// to catch up. Default: DropOldest. DefaultOverflow changes nothing: given
// to Subscribe it keeps the client's default.
func Overflow(p OverflowPolicy) DeliveryOption {
	return DeliveryOption{func(s *subConfig) {
		if p != DefaultOverflow {
			s.overflow = p
		}
	}}
}

// PendingBytes bounds the bytes of message data waiting in the
// subscription's buffer, beside the message count of Buffer; n <= 0
// leaves only the count. A message larger than the limit is still
// delivered when nothing else is pending. Default: 64 MiB.
func PendingBytes(n int) DeliveryOption {
	return DeliveryOption{func(s *subConfig) { s.pendingBytes = n }}
}

// DefaultGrace is how long a full buffer lends room by default (Grace).
// It is twice Go's 10 ms scheduling slice: on a loaded two-core machine a
// consumer that keeps up may wait that long for a processor
// (BenchmarkNotifyDelivery drops messages with 5 ms and none with 20 ms).
const DefaultGrace = 20 * time.Millisecond

// Grace sets how long a full buffer lends room to a consumer that fell
// behind, before the overflow policy applies (the dropping policies;
// Block waits anyway). From the first message that finds the buffer full,
// messages keep queueing for d, up to four times Buffer and twice
// PendingBytes, so a consumer that keeps up but lost its processor for a
// moment loses nothing, and the connection's reader never waits for it.
// The grace is earned again once the consumer has caught up (its buffer
// at most half full). 0 applies the policy at once. Default: DefaultGrace.
func Grace(d time.Duration) DeliveryOption {
	return DeliveryOption{func(s *subConfig) { s.grace = max(d, 0) }}
}

// subscribeConfig is the client's defaults with opts applied.
func (c *Client) subscribeConfig(opts []SubscribeOption) subConfig {
	sc := c.cfg.delivery
	for _, o := range opts {
		o.applySubscription(&sc)
	}
	sc.buffer = max(sc.buffer, 1)
	sc.pendingBytes = max(sc.pendingBytes, 0)
	return sc
}
