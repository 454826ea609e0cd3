package sidecar

import (
	"encoding/json"
	"sync/atomic"
)

// Drop reasons, the "reason" label of wsfan_sidecar_dropped_total.
const (
	dropQueueFull = iota // Overflow drop-newest and a full queue
	dropClosing          // the session was closing (slow consumer, shutdown)
	dropReasons
)

var dropReasonNames = [dropReasons]string{"queue_full", "closing"}

// stats are the server-wide counters, bumped on the hot path with atomics
// and read at scrape time.
type stats struct {
	dropped      [dropReasons]atomic.Uint64
	writtenBytes atomic.Uint64
	connections  atomic.Uint64 // sessions ever accepted
	calls        atomic.Uint64 // calls forwarded upstream
	callErrors   atomic.Uint64 // forwarded calls that failed
	resumes      atomic.Uint64 // topics resumed after an upstream reconnect
	reconnects   atomic.Uint64 // upstream connections lost
	lastResume   atomic.Int64  // unix nanoseconds of the last resume
	hostRefusals atomic.Uint64 // requests refused for their Host header
	invalidUTF8  atomic.Uint64 // upstream messages mended to valid UTF-8 (topic.publish)
	// crossSiteRefusals counts browser requests of another site without
	// an allowed origin; tokenRefusals requests without the token.
	crossSiteRefusals atomic.Uint64
	tokenRefusals     atomic.Uint64
	disconnect        [9]atomic.Uint64
	// reloads counts Server.Reload's outcomes (reload.go).
	reloads [reloadOutcomes]atomic.Uint64
	// refusals counts refused local subscribes and batches by reason
	// (refusals.go); refusalLogsSuppressed those not logged, over a
	// client's pace of refusal lines.
	refusals              [refusalReasons]atomic.Uint64
	refusalLogsSuppressed atomic.Uint64
}

// countCall counts a call forwarded upstream and, when err is set, its
// failure, and passes its outcome on.
func (s *stats) countCall(res json.RawMessage, err error) (json.RawMessage, error) {
	s.calls.Add(1)
	if err != nil {
		s.callErrors.Add(1)
		return nil, err
	}
	return res, nil
}

// disconnects counts a session closed for label.
func (s *stats) disconnects(label string) {
	for i, l := range disconnectReasons {
		if l == label {
			s.disconnect[i].Add(1)
			return
		}
	}
}
