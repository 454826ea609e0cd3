package natsbridge

import "sync/atomic"

// Stats are a member's counters since Join.
type Stats struct {
	// Leader side.
	Published     uint64 // messages published on live subjects
	PublishErrors uint64 // publishes nats.go refused (closed, buffer full)
	LastValues    uint64 // last values stored in JetStream
	LastValueErrs uint64 // last-value writes that failed (retried)
	Calls         uint64 // calls forwarded upstream for members
	Terms         uint64 // times this member became the leader
	Fenced        uint64 // messages and calls not used because the lease was no longer proven

	// Consumer side.
	Delivered  uint64 // messages delivered to subscriptions (last values included)
	Duplicates uint64 // messages dropped as already delivered (last value and live copy)
	Stale      uint64 // messages of a former leader dropped after a newer leader's
	Invalid    uint64 // messages with missing or malformed headers, dropped
	Dropped    uint64 // messages dropped by the overflow policy
}

// stats are the counters behind Stats, updated by many goroutines.
type stats struct {
	published, publishErrors, lastValues, lastValueErrs, calls, terms, fenced atomic.Uint64
	delivered, duplicates, stale, invalid, dropped                            atomic.Uint64
}

func (s *stats) snapshot() Stats {
	return Stats{
		Published:     s.published.Load(),
		PublishErrors: s.publishErrors.Load(),
		LastValues:    s.lastValues.Load(),
		LastValueErrs: s.lastValueErrs.Load(),
		Calls:         s.calls.Load(),
		Terms:         s.terms.Load(),
		Fenced:        s.fenced.Load(),
		Delivered:     s.delivered.Load(),
		Duplicates:    s.duplicates.Load(),
		Stale:         s.stale.Load(),
		Invalid:       s.invalid.Load(),
		Dropped:       s.dropped.Load(),
	}
}
