package client

// SubscribeOption configures one subscription; pass it to Subscribe after
// the topics. Without one, a subscription takes the client's defaults.
type SubscribeOption interface{ applySubscription(*subConfig) }

// subConfig is one subscription's delivery settings.
type subConfig struct {
	buffer       int
	overflow     OverflowPolicy
	pendingBytes int
}

// DeliveryOption is one of a subscription's delivery settings (Buffer,
// Overflow, PendingBytes). It is both an Option and a SubscribeOption:
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
