package sidecar

import (
	"net"
	"sync"
	"time"

	"github.com/wsfan/wsfan/pkg/protocol"
)

// The writer goroutine of a transport that owns its socket (a WebSocket
// connection, an SSE stream taken over from net/http) runs only while
// frames are queued: it writes every queued frame in one writev(2) and
// returns once the queue stays empty.

// writeScratch is a writer's working memory. It is pooled rather than
// kept per session, so an idle session holds none.
type writeScratch struct {
	spare [][]byte // the queue array the next take puts in place
	vec   [][]byte // the batch for WriteTo, which consumes it
	tails []byte   // the batch's send slots, filled (fillSendSlots)
}

var scratchPool = sync.Pool{New: func() any { return new(writeScratch) }}

// writeQueued writes s's queued frames to nc, each batch in one
// writev(2) within timeout, until the queue stays empty or the session
// closes (closed; tail is then the unwritten end of a frame a failed
// write cut, or nil). A failed write closes the session.
func writeQueued(s *session, nc net.Conn, timeout time.Duration) (tail []byte, closed bool) {
	sc := scratchPool.Get().(*writeScratch)
	defer scratchPool.Put(sc)
	for {
		batch, closing := s.take(sc.spare, true)
		if len(batch) == 0 && !closing {
			return nil, false // the next frame starts a writer again
		}
		if closing {
			return tail, true
		}
		sc.spare = nil // the queue's now
		sc.vec = append(sc.vec[:0], batch...)
		if s.enc.stamped {
			sc.tails = fillSendSlots(sc.vec, sc.tails)
		}
		bufs := net.Buffers(sc.vec)
		_ = nc.SetWriteDeadline(time.Now().Add(timeout))
		n, err := bufs.WriteTo(nc) // writev(2) on TCP
		clear(sc.vec)
		if cap(sc.vec) > maxSpare {
			sc.vec = nil
		}
		if cap(sc.tails) > maxSpare*protocol.StampsTailLen {
			sc.tails = nil
		}
		if err != nil {
			tail = unwrittenTail(batch, sc.tails, n)
		}
		sc.spare = s.wrote(batch)
		if err != nil {
			s.close(closeReason{}, true)
		}
	}
}

// unwrittenTail returns the rest of the frame that a write of n bytes of
// batch stopped in, or nil if it stopped between frames. A frame and the
// send slot after it are one frame, the slot's bytes as written: the
// next of tails (fillSendSlots). The rest is a copy: tails is scratch.
func unwrittenTail(batch [][]byte, tails []byte, n int64) []byte {
	for i, f := range batch {
		slot := isSendSlot(f)
		if slot {
			f, tails = tails[:len(f)], tails[len(f):]
		}
		if n >= int64(len(f)) {
			n -= int64(len(f))
			continue
		}
		if n == 0 && !slot {
			return nil
		}
		rest := append([]byte(nil), f[n:]...)
		if !slot && i+1 < len(batch) && isSendSlot(batch[i+1]) {
			rest = append(rest, tails[:len(batch[i+1])]...)
		}
		return rest
	}
	return nil
}
