package client

import (
	"fmt"
	"strings"
)

// OverflowPolicy says what happens when a subscription's buffer is full.
// The reader waits briefly for a consumer before applying it (see
// Subscription), and for as long as it takes under Block. The sidecar
// names its choice for a slow local client with the same policies
// (sidecar.Config.Overflow).
type OverflowPolicy uint8

const (
	// DefaultOverflow, the zero value, is the default of where the policy
	// is used: DropOldest for a subscription (or the Overflow given to
	// Dial), CloseSubscription for a sidecar's local client.
	DefaultOverflow OverflowPolicy = iota
	// DropOldest discards the oldest buffered message to make room: the
	// consumer always sees the freshest data (the default).
	DropOldest
	// DropNewest discards the incoming message.
	DropNewest
	// Block makes the reader wait for the consumer, which stalls every
	// subscription and the RPC responses of the connection. Use it only
	// when every message matters more than latency.
	Block
	// CloseSubscription ends the subscription with ErrSlowConsumer. As
	// for any end, C then still holds what it held (at most 64
	// messages); what waited beside it is dropped and counted in
	// Dropped.
	CloseSubscription
)

var overflowNames = [...]string{DefaultOverflow: "default", DropOldest: "drop-oldest", DropNewest: "drop-newest",
	Block: "block", CloseSubscription: "close-subscription"}

func (p OverflowPolicy) String() string {
	if int(p) < len(overflowNames) {
		return overflowNames[p]
	}
	return "unknown"
}

// MarshalText returns the policy's name, as String.
func (p OverflowPolicy) MarshalText() ([]byte, error) {
	if int(p) >= len(overflowNames) {
		return nil, fmt.Errorf("wsfan: unknown overflow policy %d", uint8(p))
	}
	return []byte(p.String()), nil
}

// UnmarshalText parses a policy's name (drop-oldest, drop-newest, block,
// close-subscription; "default" or nothing for DefaultOverflow), in any
// case: flags, YAML and environment variables take these names.
func (p *OverflowPolicy) UnmarshalText(b []byte) error {
	name := strings.ToLower(strings.TrimSpace(string(b)))
	if name == "" {
		*p = DefaultOverflow
		return nil
	}
	for i, n := range overflowNames {
		if n == name {
			*p = OverflowPolicy(i)
			return nil
		}
	}
	return fmt.Errorf("wsfan: unknown overflow policy %q (want one of %s)", b, strings.Join(overflowNames[1:], ", "))
}
