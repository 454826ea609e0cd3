package exchangetest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/wsfan/wsfan/pkg/protocol"
)

// Received is one message the server received from a client.
type Received struct {
	Conn int       // the connection, numbered from 1 in accept order
	Data []byte    // the message as received (text or binary)
	Time time.Time // when it was read
}

// recorder keeps every received message. The zero value is ready to use.
type recorder struct {
	mu      sync.Mutex
	msgs    []Received
	methods [][]string // per message: its "method" values ("event" for Ethereal)
	subs    [][]string // per message: the topics its subscribe requests name
}

// add records a message received at t and the methods of its requests
// (for Ethereal: events); it runs on the connection's reader goroutine.
func (r *recorder) add(conn int, data []byte, t time.Time, reqs []protocol.Incoming) {
	var methods, subs []string
	for _, req := range reqs {
		if req.Method != "" {
			methods = append(methods, req.Method)
		}
		if req.Op == protocol.OpSubscribe && req.Err == nil {
			subs = append(subs, req.Topics...)
		}
	}
	r.mu.Lock()
	r.msgs = append(r.msgs, Received{Conn: conn, Data: data, Time: t})
	r.methods = append(r.methods, methods)
	r.subs = append(r.subs, subs)
	r.mu.Unlock()
}

// Received returns a copy of every message received from clients, in order.
func (s *Server) Received() []Received {
	s.rec.mu.Lock()
	defer s.rec.mu.Unlock()
	return slices.Clone(s.rec.msgs)
}

// ResetReceived forgets the messages received so far.
func (s *Server) ResetReceived() {
	s.rec.mu.Lock()
	s.rec.msgs, s.rec.methods, s.rec.subs = nil, nil, nil
	s.rec.mu.Unlock()
	s.chg.notify()
}

// CountReceived returns how many received frames have the JSON "method"
// (for Ethereal: "event") method. A batch array counts once if any element
// has it.
func (s *Server) CountReceived(method string) int {
	s.rec.mu.Lock()
	defer s.rec.mu.Unlock()
	n := 0
	for _, ms := range s.rec.methods {
		if slices.Contains(ms, method) {
			n++
		}
	}
	return n
}

// CountSubscribes returns how many received frames subscribe topic (a
// batch array counts once): how often a client asked for it, whatever
// else the frames asked (a Thalex client's system channel, say).
func (s *Server) CountSubscribes(topic string) int {
	s.rec.mu.Lock()
	defer s.rec.mu.Unlock()
	n := 0
	for _, ts := range s.rec.subs {
		if slices.Contains(ts, topic) {
			n++
		}
	}
	return n
}

// WaitReceived waits until at least n received frames have method, as
// counted by CountReceived.
func (s *Server) WaitReceived(ctx context.Context, method string, n int) error {
	return s.chg.wait(ctx, func() (bool, string) {
		have := s.CountReceived(method)
		return have >= n, fmt.Sprintf("%d frames with method %q, have %d", n, method, have)
	})
}
