package protocol

import "time"

// ResyncPaced is a Protocol whose venue wants the resyncs of a topic
// spaced when they repeat: a topic resubscribed for a fresh snapshot
// again and again (a book whose checksum keeps failing) would otherwise
// be resubscribed as fast as the snapshots come, into the venue's rate
// limit. ResyncBackoff gives the wait before a resync that follows the
// last within that wait plus most: first, doubling with each such resync
// up to most; a resync after a quiet spell goes at once (Kraken: 1 s
// doubling to 30 s).
type ResyncPaced interface {
	ResyncBackoff() (first, most time.Duration)
}
