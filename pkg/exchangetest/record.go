package exchangetest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"
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
}

// add records a message; it runs on the connection's reader goroutine.
func (r *recorder) add(d Dialect, conn int, data []byte) {
	m := frameMethods(d, data)
	r.mu.Lock()
	r.msgs = append(r.msgs, Received{Conn: conn, Data: data, Time: time.Now()})
	r.methods = append(r.methods, m)
	r.mu.Unlock()
}

// frameMethods returns the "method" (or, for Ethereal, "event") of a frame,
// or of every element of a batch array.
func frameMethods(d Dialect, data []byte) []string {
	type probe struct {
		Method string `json:"method"`
		Event  string `json:"event"`
	}
	name := func(p probe) string {
		if d == Ethereal {
			return p.Event
		}
		return p.Method
	}
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] == '[' {
		var ps []probe
		if json.Unmarshal(data, &ps) != nil {
			return nil
		}
		var out []string
		for _, p := range ps {
			if n := name(p); n != "" {
				out = append(out, n)
			}
		}
		return out
	}
	var p probe
	if json.Unmarshal(data, &p) != nil || name(p) == "" {
		return nil
	}
	return []string{name(p)}
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
	s.rec.msgs, s.rec.methods = nil, nil
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

// WaitReceived waits until at least n received frames have method, as
// counted by CountReceived.
func (s *Server) WaitReceived(ctx context.Context, method string, n int) error {
	return s.chg.wait(ctx, func() (bool, string) {
		have := s.CountReceived(method)
		return have >= n, fmt.Sprintf("%d frames with method %q, have %d", n, method, have)
	})
}
