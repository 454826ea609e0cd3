package sidecar

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"sync"
	"time"
)

// sseSocket is an SSE session's transport once its response is taken
// over from net/http (http.Hijacker, HTTP/1.x): the stream's connection,
// written as a WebSocket's is (session.offer writes from a caught-up pump
// straight to the socket, tryWrite; otherwise a writer goroutine, run
// only while events are queued, writes them in one writev(2)), and read
// by the request's handler goroutine, which only notices the client going
// away and queues a keep-alive comment while the stream is quiet. Before,
// every event woke the handler to write it through net/http's chunked
// writer: an SSE delivery cost 2.3 times a WebSocket one.
//
// The body is not chunked: the response says Connection: close and the
// stream ends with the connection, as HTTP/1.x allows. A server that
// cannot hand the connection over (HTTP/2) keeps the handler's writer
// (sseStream).
type sseSocket struct {
	s *session
	// mu orders hijack's setting nc against cut and abort, which a
	// Server's Close may call while the stream still subscribes; nc is
	// read without it once the stream is attached.
	mu           sync.Mutex
	cutEarly     bool // cut came before nc: hijack closes it at once
	nc           net.Conn
	raw          rawWriter      // nc's descriptor for tryWrite
	flush        func()         // writeLoop as a value: go flush() allocates nothing
	writers      sync.WaitGroup // the writer goroutine, while it runs
	writeTimeout time.Duration
	in           *bufio.Reader // the connection's reader, with what net/http had read ahead
}

func newSSESocket(writeTimeout time.Duration) *sseSocket {
	st := &sseSocket{writeTimeout: writeTimeout}
	st.flush = st.writeLoop
	return st
}

func (st *sseSocket) kind() sessionKind { return kindSSE }

// wake starts the writer goroutine; the session calls it when the writer
// is idle, so there is never more than one.
func (st *sseSocket) wake() {
	st.writers.Add(1) // writeLoop calls Done
	go st.flush()
}

// abort gives a writer stuck on a full socket up now.
func (st *sseSocket) abort() {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.nc != nil {
		_ = st.nc.SetWriteDeadline(time.Now())
	}
}

// cut closes the connection, which ends the handler's read; before the
// connection is taken over, hijack closes it at once.
func (st *sseSocket) cut() {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.nc == nil {
		st.cutEarly = true
		return
	}
	_ = st.nc.Close()
}

// tryWrite writes as much of frame as the socket takes now (rawWriter).
func (st *sseSocket) tryWrite(frame []byte) int { return st.raw.tryWrite(frame) }

// waitCalls returns at once: a stream forwards no calls.
func (st *sseSocket) waitCalls(context.Context) {}

// writeLoop is the writer goroutine (writeQueued); once the session
// closes it closes the connection, which ends the stream.
func (st *sseSocket) writeLoop() {
	defer st.writers.Done()
	if _, closed := writeQueued(st.s, st.nc, st.writeTimeout); closed {
		_ = st.nc.Close()
	}
}

// hijack takes the connection over from net/http and writes the
// response's head (the status, the headers set on w, and Connection:
// close: the stream ends with the connection) and first, the stream's
// first lines. It returns an error when w cannot hand the connection
// over (nothing is answered then), or when the client is gone.
func (st *sseSocket) hijack(w http.ResponseWriter, first string) error {
	nc, rw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		http.Error(w, "the stream cannot be served: "+err.Error(), http.StatusInternalServerError)
		return err
	}
	st.mu.Lock()
	st.nc, st.in = nc, rw.Reader
	st.raw.init(nc)
	early := st.cutEarly
	st.mu.Unlock()
	if early {
		_ = nc.Close()
		return net.ErrClosed
	}
	h := w.Header()
	h.Set("Connection", "close")
	var head bytes.Buffer
	head.WriteString("HTTP/1.1 200 OK\r\n")
	_ = h.Write(&head) // as net/http writes headers: sorted, line breaks in values made spaces
	head.WriteString("\r\n")
	head.WriteString(first)
	_ = nc.SetWriteDeadline(time.Now().Add(st.writeTimeout))
	if _, err := nc.Write(head.Bytes()); err != nil {
		_ = nc.Close()
		return err
	}
	_ = nc.SetWriteDeadline(time.Time{})
	return nil
}

// watch is the handler goroutine once the stream is attached: it reads
// (and discards) what the client sends until it goes away or the session
// closes the connection, queueing a keep-alive comment whenever
// sseKeepAlive passes without a read.
func (st *sseSocket) watch() {
	buf := make([]byte, 512)
	for {
		_ = st.nc.SetReadDeadline(time.Now().Add(sseKeepAlive))
		_, err := st.in.Read(buf)
		if err == nil {
			continue // a client has nothing to say on a stream: ignored
		}
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			break // the client went away, or the session closed the connection
		}
		st.s.reply(sseKeepAliveComment)
		if _, closing := st.s.closeState(); closing {
			break
		}
	}
}

// end waits for the writer, once the session is closed, and closes the
// connection.
func (st *sseSocket) end() {
	st.writers.Wait()
	_ = st.nc.Close()
}

// sseKeepAliveComment is the line an idle stream gets every sseKeepAlive.
var sseKeepAliveComment = []byte(": keep-alive\n\n")
