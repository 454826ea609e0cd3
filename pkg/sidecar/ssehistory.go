package sidecar

import "sort"

// history is a topic's last messages, kept for SSE streams that resume
// with Last-Event-ID, at most limit.messages messages and limit.bytes
// bytes of payload. It is kept once a topic has had an SSE subscriber,
// and goes with the topic (the grace period after its last subscriber).
// topic.mu protects it.
type history struct {
	limit   historyLimit
	on      bool
	entries []historyEntry // oldest first, seq ascending
	bytes   int
	// evicted is the seq of the newest message dropped for room: a
	// stream that stood before it cannot resume without a gap.
	evicted uint64
}

// historyLimit bounds a history (Config.SSEHistory, SSEHistoryBytes).
type historyLimit struct{ messages, bytes int }

// historyEntry is one message: its seq, a copy of its payload (the
// upstream's is a slice of a read buffer it must not pin), and whether
// it was the first after an upstream change.
type historyEntry struct {
	seq     uint64
	data    []byte
	resumed bool
}

// add keeps message seq and drops the oldest while over the limits.
func (h *history) add(seq uint64, data []byte, resumed bool) {
	h.entries = append(h.entries, historyEntry{seq: seq, data: append([]byte(nil), data...), resumed: resumed})
	h.bytes += len(data)
	drop := 0
	for len(h.entries)-drop > h.limit.messages || (h.bytes > h.limit.bytes && len(h.entries)-drop > 1) {
		h.bytes -= len(h.entries[drop].data)
		h.evicted = h.entries[drop].seq
		h.entries[drop] = historyEntry{}
		drop++
	}
	h.entries = h.entries[drop:]
}

// after returns the messages after seq.
func (h *history) after(seq uint64) []historyEntry {
	i := sort.Search(len(h.entries), func(i int) bool { return h.entries[i].seq > seq })
	return h.entries[i:]
}
