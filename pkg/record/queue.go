package record

import (
	"sync"
	"time"

	"github.com/wsfan/wsfan/pkg/client"
)

// queue carries tapped frames from the connections' goroutines to the
// Recorder's writer goroutine. A tap copies its frame into one buffer,
// back to back with the others, under a short lock; nothing is
// allocated a frame, the writer is woken when wakeBytes are queued (and
// takes what waits at each flush tick besides), not once a frame, and
// the queue holds no pointers a frame (the collector scans two slices,
// not a channel of records). The writer takes everything queued at once
// and gives the emptied buffers back for reuse.
type queue struct {
	limit int // bytes of frames and topics queued at most

	mu   sync.Mutex // protects the following
	data []byte     // the queued frames and Flagged records' topics, back to back
	recs []queued
	shut bool // Close was called: taps are dropped

	wake chan struct{} // cap 1: wakeBytes are queued
}

// wakeBytes queued wake the writer before its next tick.
const wakeBytes = 64 << 10

// queued is a queued record: its frame is data[off:off+n], a Flagged
// record's topic data[off+n:off+n+topic].
type queued struct {
	at           int64
	client, conn uint64
	endpoint     int
	off, n       int
	topic        int
	dir          Direction
	flags        client.Flags
}

// keptBytes is the most a taken buffer keeps for reuse: a burst's larger
// one goes back to the collector.
const keptBytes = 4 << 20

func newQueue(limit int64) *queue {
	return &queue{limit: int(min(limit, int64(^uint(0)>>1))), wake: make(chan struct{}, 1)}
}

// offer queues rec with copies of its frame and topic. It reports false,
// queuing nothing, when the queue is full or shut. It never blocks but
// on the lock, held by another offer or by take for a swap.
func (q *queue) offer(rec *Record) bool {
	q.mu.Lock()
	if q.shut || len(q.data)+len(rec.Frame)+len(rec.Topic) > q.limit {
		q.mu.Unlock()
		return false
	}
	off := len(q.data)
	wake := off < wakeBytes && off+len(rec.Frame)+len(rec.Topic) >= wakeBytes
	q.data = append(q.data, rec.Frame...)
	q.data = append(q.data, rec.Topic...)
	q.recs = append(q.recs, queued{at: rec.Time.UnixNano(), client: rec.Client, conn: rec.Conn, endpoint: rec.Endpoint,
		off: off, n: len(rec.Frame), topic: len(rec.Topic), dir: rec.Dir, flags: rec.Flags})
	q.mu.Unlock()
	if wake {
		select {
		case q.wake <- struct{}{}:
		default:
		}
	}
	return true
}

// take swaps what is queued for the emptied buffers data and recs (from
// the last take) and returns it. Called by the writer goroutine only.
func (q *queue) take(data []byte, recs []queued) ([]byte, []queued) {
	if cap(data) > keptBytes || cap(recs) > keptBytes/64 {
		data, recs = nil, nil
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	out, outRecs := q.data, q.recs
	q.data, q.recs = data[:0], recs[:0]
	return out, outRecs
}

// record is q's record as the writer handles it: its frame aliases data.
func (q *queued) record(data []byte) Record {
	end := q.off + q.n
	rec := Record{Time: time.Unix(0, q.at), Dir: q.dir, Client: q.client, Conn: q.conn, Endpoint: q.endpoint, Frame: data[q.off:end:end], Flags: q.flags}
	if q.topic > 0 {
		rec.Topic = string(data[end : end+q.topic])
	}
	return rec
}

// shutdown drops every later offer.
func (q *queue) shutdown() {
	q.mu.Lock()
	q.shut = true
	q.mu.Unlock()
}
