package client

import (
	"fmt"
	"strings"
	"time"
)

// Flags mark messages a consumer may need to act on.
type Flags uint8

const (
	// FlagReconnected marks the first message of each topic after a
	// reconnect: state built from earlier messages may be stale (resync
	// books from this snapshot).
	FlagReconnected Flags = 1 << iota
	// FlagGap marks a message whose change id does not follow the previous
	// one (Deribit prev_change_id, Ethereal pt): updates were lost
	// upstream; the first message after a frame of the topic was dropped
	// for its size (WithReadLimit); or, behind a wsfan sidecar, the first
	// after its gap notice (protocol.GapNotice): the sidecar lost
	// messages of the topic.
	FlagGap
	// FlagSnapshot marks a message the exchange marks as a whole state,
	// not a change to the one before: Thalex's top-level "snapshot":true,
	// a sequenced topic's message that names no previous change (Deribit
	// book "type":"snapshot", Ethereal's first L2Book). A local book
	// starts over from it.
	FlagSnapshot
	// FlagStale marks the first message of a topic after it was found
	// stale, silent while others flowed, and resubscribed
	// (WithStaleAfter): messages may have been lost meanwhile.
	FlagStale
	// FlagBackfilled marks a message the server made while the client
	// was reconnecting, which the client fetched (WithBackfill: an
	// Ethereum node's heads) and delivered, in order, before the live
	// ones.
	FlagBackfilled
	// FlagReorg marks a head whose parent is not the previous head (an
	// Ethereum node's newHeads after a reorganisation): the blocks the
	// Reorg event names are no longer canonical.
	FlagReorg
	// FlagRetracted marks a message that takes back an earlier one: an
	// Ethereum log sent again with "removed": true, its block replaced
	// by a reorganisation.
	FlagRetracted
)

// String names the flags set, such as "reconnected|snapshot"; "none"
// when none is.
func (f Flags) String() string {
	var names []string
	for _, n := range []struct {
		flag Flags
		name string
	}{{FlagReconnected, "reconnected"}, {FlagGap, "gap"}, {FlagSnapshot, "snapshot"}, {FlagStale, "stale"}, {FlagBackfilled, "backfilled"}, {FlagReorg, "reorg"}, {FlagRetracted, "retracted"}} {
		if f&n.flag != 0 {
			names = append(names, n.name)
			f &^= n.flag
		}
	}
	if f != 0 {
		names = append(names, fmt.Sprintf("Flags(%#x)", uint8(f)))
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, "|")
}

// Message is one notification delivered to a subscription.
type Message struct {
	// Topic is the topic as passed to Subscribe.
	Topic string
	// Data is the notification payload: Thalex "notification", Deribit
	// "params.data", Ethereum "params.result", Ethereal the whole frame.
	// It is sliced from the received frame without a copy and belongs to
	// the receiver; the client never touches it again. It shares its
	// 64 KiB read slab with the frames around it, so holding Data (or
	// anything sliced from it) keeps the whole slab alive: copy what you
	// keep, or use Decode, which copies.
	Data []byte
	// Seq counts the frames this subscription received, delivered or
	// dropped, from 1: a jump shows messages dropped by the overflow policy.
	Seq uint64
	// Flags mark the first message after a reconnect or a gap.
	Flags Flags
	// RecvTime is when the frame was read from the connection, by this
	// process's wall clock, before it was parsed or queued.
	RecvTime time.Time
	// ExchangeTime is the venue's stamp of the message, by the venue's
	// clock (Deribit's timestamp, OKX's ts, Thalex's time, Ethereal's t,
	// an Ethereum head's timestamp, whole seconds); zero when the venue
	// gives none, and without WithStamps. RecvTime minus ExchangeTime is
	// the venue's delay plus the clocks' skew (docs/latency.md).
	ExchangeTime time.Time
	// UpstreamRecvTime is, for a message that came through a wsfan
	// sidecar, when the sidecar read it from its upstream, by its clock;
	// zero otherwise, and without WithStamps. It tells the venue→sidecar
	// part (UpstreamRecvTime minus ExchangeTime) from the
	// sidecar→program part (RecvTime minus UpstreamRecvTime).
	UpstreamRecvTime time.Time
}

// Reconnected reports whether FlagReconnected is set.
func (m Message) Reconnected() bool { return m.Flags&FlagReconnected != 0 }

// Gap reports whether FlagGap is set.
func (m Message) Gap() bool { return m.Flags&FlagGap != 0 }

// Stale reports whether FlagStale is set.
func (m Message) Stale() bool { return m.Flags&FlagStale != 0 }

// Snapshot reports whether FlagSnapshot is set.
func (m Message) Snapshot() bool { return m.Flags&FlagSnapshot != 0 }
