package client

import (
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/gorilla/websocket"
)

// slabSize is the size of the buffers frames are read into. Frames are
// carved out of a slab one after another, so reading costs one allocation
// per slab rather than per frame; a message keeps its slab alive until the
// consumer drops it.
const slabSize = 64 << 10

// errOversized marks a frame over the read limit.
var errOversized = errors.New("frame over the read limit")

// readLoop is the reader goroutine: it reads every frame and routes it.
// It waits for a consumer only briefly before its overflow policy applies
// (subscription.go), or for as long as it takes under Block.
func (cn *conn) readLoop() {
	defer cn.wg.Done()
	c := cn.c
	for {
		typ, r, err := cn.ws.NextReader()
		if err != nil {
			cn.fail(readError(err))
			return
		}
		data, err := cn.readFrame(r)
		now := time.Now()
		cn.lastRead.Store(now.UnixNano())
		switch {
		case errors.Is(err, errOversized):
			c.dropFrame(dropOversized, fmt.Errorf("%w (%d bytes)", err, c.cfg.readLimit), nil)
			continue
		case err != nil:
			cn.fail(readError(err))
			return
		case typ != websocket.TextMessage:
			c.dropFrame(dropBinary, errors.New("binary message"), data)
			continue
		}
		c.handleFrame(cn, data, now)
	}
}

// readFrame reads one message into the slab. An oversized message is
// read to its end and discarded.
func (cn *conn) readFrame(r io.Reader) ([]byte, error) {
	limit := cn.c.cfg.readLimit
	if len(cn.slab) < 4096 {
		cn.slab = make([]byte, slabSize)
	}
	buf, n := cn.slab, 0
	for {
		if n == len(buf) {
			if int64(n) > limit {
				_, err := io.Copy(io.Discard, r)
				if err != nil {
					return nil, err
				}
				return nil, errOversized
			}
			grown := make([]byte, min(int64(2*len(buf)), limit+1))
			copy(grown, buf[:n])
			buf = grown
		}
		m, err := r.Read(buf[n:])
		n += m
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if int64(n) > limit {
		return nil, errOversized
	}
	frame := buf[:n:n]
	if &buf[0] == &cn.slab[0] {
		cn.slab = cn.slab[n:]
	}
	return frame, nil
}

// readError names why reading stopped.
func readError(err error) error {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return fmt.Errorf("%w: no pong in time", ErrDeadPeer)
	}
	var ce *websocket.CloseError
	if errors.As(err, &ce) {
		return fmt.Errorf("server closed the connection: %w", err)
	}
	return fmt.Errorf("read: %w", err)
}
