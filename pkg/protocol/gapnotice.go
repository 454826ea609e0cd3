package protocol

import (
	"encoding/json"
	"net/http"
	"strings"
)

// Gap notices are wsfan's own notification, not a venue's: a fan-out
// server (the sidecar) sends one to a WebSocket client that asked for
// them, just before the message after a hole in a topic's stream (and,
// with GapDown, when a hole starts), so a program behind it learns what
// it may have missed as it would have directly (no venue has such a
// frame, so by default none is sent and the stream stays byte for byte
// the venue's). A client asks with the
// handshake header NotifyHeader: NotifyGaps, or the query parameter
// notify=gaps. pkg/client asks on every dial and reads them.
//
// The notice is a notification in the dialect's envelope; for a JSON-RPC
// dialect:
//
//	{"jsonrpc":"2.0","method":"wsfan/gap","params":{"channel":"book.BTC-PERPETUAL.100ms","cause":"reconnected"}}
//
// with "subscription" in params where the dialect routes by subscription
// id (Ethereum), and without "jsonrpc" for a dialect that is not JSON-RPC
// (Ethereal).
const (
	// NotifyHeader is the handshake header asking for notices.
	NotifyHeader = "Wsfan-Notify"
	// NotifyGaps is its value (and the notify query parameter's) asking
	// for gap notices.
	NotifyGaps = "gaps"
	// GapNoticeMethod is the notice's method.
	GapNoticeMethod = "wsfan/gap"
)

// The causes a gap notice names.
const (
	// GapReconnected: the upstream connection was lost and restored;
	// messages of the topic in between were not received.
	GapReconnected = "reconnected"
	// GapSequence: the topic's sequence broke upstream, or a frame of it
	// was dropped (over the read limit).
	GapSequence = "gap"
	// GapStale: the topic went silent while others flowed and was
	// resubscribed; messages may have been lost meanwhile.
	GapStale = "stale"
	// GapBackfilled: the upstream connection was lost and restored, and
	// the messages of the topic in between were fetched: they follow, in
	// order, before the live ones; nothing is missing.
	GapBackfilled = "backfilled"
	// GapDown: the topic's source stopped (in a NATS group of sidecars:
	// this sidecar's link to the group, or the group's upstream as its
	// leader reports it), so messages may be lost from now on; sent when
	// the hole starts, not before a message. The next message after it
	// comes with its own notice when any were lost.
	GapDown = "down"
	// GapDropped: the fan-out server dropped messages of the topic for
	// this client, its queue to the client being full (the sidecar's
	// -overflow drop-newest): the client fell behind, the upstream did
	// not.
	GapDropped = "dropped"
)

// GapNotice is what a gap notice says.
type GapNotice struct {
	Channel      string `json:"channel"`                // the topic, as the client subscribed it
	Subscription string `json:"subscription,omitempty"` // its subscription id, where the dialect has one
	Cause        string `json:"cause"`                  // one of the Gap* causes
}

// WantsGapNotices reports whether a WebSocket handshake asked for gap
// notices.
func WantsGapNotices(r *http.Request) bool { return wantsNotice(r, NotifyGaps) }

// wantsNotice reports whether a handshake asked for what: the
// NotifyHeader or the notify query parameter names it, alone or in a
// comma-separated list ("gaps,stamps").
func wantsNotice(r *http.Request, what string) bool {
	for _, list := range [][]string{r.Header.Values(NotifyHeader), r.URL.Query()["notify"]} {
		for _, v := range list {
			for name := range strings.SplitSeq(v, ",") {
				if strings.TrimSpace(name) == what {
					return true
				}
			}
		}
	}
	return false
}

// AppendGapNotice appends the gap notice n, a JSON-RPC notification when
// rpc is true.
func AppendGapNotice(dst []byte, rpc bool, n GapNotice) []byte {
	params, _ := json.Marshal(n) // three strings: cannot fail
	if rpc {
		dst = append(dst, `{"jsonrpc":"2.0",`...)
	} else {
		dst = append(dst, '{')
	}
	dst = append(dst, `"method":"`+GapNoticeMethod+`","params":`...)
	dst = append(dst, params...)
	return append(dst, '}')
}

// ParseGapNotice reads a frame as a gap notice; ok is false for any
// other frame. It is for the rare path of a frame the dialect did not
// recognise, never the hot one.
func ParseGapNotice(frame []byte) (n GapNotice, ok bool) {
	var f struct {
		Method string    `json:"method"`
		Params GapNotice `json:"params"`
	}
	if json.Unmarshal(frame, &f) != nil || f.Method != GapNoticeMethod || f.Params.Channel == "" && f.Params.Subscription == "" {
		return GapNotice{}, false
	}
	return f.Params, true
}
