package natsbridge

import "time"

// DefaultLateAfter is WithLateAfter's default.
const DefaultLateAfter = time.Second

// WithLateAfter sets when a live message counts as late: it reached this
// member more than d after the leader read it from its upstream
// (HeaderRecvNs against this member's clock). A NATS link that stalls
// for less than its ping notice heals without a reconnect, and what was
// held back arrives in a burst: the first late message of each run of
// late ones is delivered with client.FlagStale (a sidecar's programs
// that asked get the "stale" gap notice before it), so a program learns
// that what follows is old; Message.UpstreamRecvTime tells how old each
// is. A message without the stamp (an older leader's) is never late,
// nor a last value from the cache. The members' clocks must agree to
// well within d (NTP keeps them to milliseconds). 0 turns it off.
// Default: 1s.
func WithLateAfter(d time.Duration) Option { return func(c *config) { c.lateAfter = d } }

// lateness follows a topic reader's runs of late messages. Owned by the
// reader's handler, under topicReader.mu.
type lateness struct {
	late bool // the last live message was late
}

// mark reports whether a live message read by the leader at recv (unix
// ns, 0 when unknown) and arriving at now starts a run of late ones
// (more than after between the two), and remembers whether it was late.
func (l *lateness) mark(recv int64, now time.Time, after time.Duration) bool {
	late := after > 0 && recv > 0 && now.Sub(time.Unix(0, recv)) > after
	starts := late && !l.late
	l.late = late
	return starts
}
