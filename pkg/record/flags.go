package record

import (
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// holeFlags are the flags a Flagged record keeps: what wsfan decided
// about a message, not what its frame says (FlagSnapshot, the venue's
// mark, is in the frame's own record) nor what a replay works out from
// the frames again (FlagRetracted: an Ethereum log's "removed").
const holeFlags = client.FlagReconnected | client.FlagGap | client.FlagStale | client.FlagBackfilled | client.FlagReorg

// Flagged records the flags m came with, when it has any of wsfan's own
// (a reconnect, a gap, a stale topic, a backfill, a reorganisation),
// so that a replay tells a program what wsfan told the program that
// received m. Give it the messages a program gets, not those of each
// leg: a sidecar gives it every message of its topics; a program
// recording with WithFrameTap may give it those of its subscriptions. It
// never blocks; it is safe for concurrent use.
func (r *Recorder) Flagged(m client.Message) {
	flags := m.Flags & holeFlags
	if flags == 0 || m.RecvTime.IsZero() {
		return
	}
	r.offer(Record{Time: m.RecvTime, Dir: Flagged, Flags: flags, Topic: m.Topic})
}

// NoticeCause is the cause of the gap notice (protocol.GapNotice) that
// tells a program behind a fan-out server of the hole flags mark, as a
// sidecar names it; ok is false when flags mark no hole a notice tells
// (FlagReorg: a program works it out from the heads themselves).
func NoticeCause(flags client.Flags) (cause string, ok bool) {
	switch {
	case flags&client.FlagBackfilled != 0:
		return protocol.GapBackfilled, true
	case flags&client.FlagStale != 0:
		return protocol.GapStale, true
	case flags&client.FlagReconnected != 0:
		return protocol.GapReconnected, true
	case flags&client.FlagGap != 0:
		return protocol.GapSequence, true
	}
	return "", false
}
