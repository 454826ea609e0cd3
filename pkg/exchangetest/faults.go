package exchangetest

import (
	"bytes"
	"time"

	"github.com/gorilla/websocket"
)

// SetRefused makes the server refuse subscriptions to topics from now on,
// replacing the refused set (none by default). Existing subscriptions stay.
func (s *Server) SetRefused(topics ...string) {
	refused := make(map[string]struct{}, len(topics))
	for _, t := range topics {
		refused[t] = struct{}{}
	}
	s.mu.Lock()
	s.refused = refused
	s.mu.Unlock()
}

// SetResponseDelay delays every RPC response, subscribe acknowledgements
// included, by d from now on (0, the default, is no delay). Notifications
// are not delayed and may overtake delayed responses.
func (s *Server) SetResponseDelay(d time.Duration) {
	s.delay.Store(int64(d))
}

// SetPongs switches answering WebSocket pings on (the default) or off.
func (s *Server) SetPongs(on bool) {
	s.noPongs.Store(!on)
}

// SetSilent makes the server send nothing at all (responses,
// notifications, pongs, heartbeats are discarded) while on, keeping the
// connections open and reading. Off is the default.
func (s *Server) SetSilent(on bool) {
	s.silent.Store(on)
}

// SendReconnectNotice sends the dialect's "reconnect soon" notice (the
// server half's AppendReconnectNotice: Thalex's system channel event) to
// every connection subscribed to the exchange's notice channel (Thalex's
// system; every connection when it has none) and returns how many it was
// queued to; 0 when the dialect has no such notice.
func (s *Server) SendReconnectNotice() int {
	notice := s.wire.AppendReconnectNotice(nil)
	switch {
	case len(notice) == 0:
		return 0
	case s.ex.NoticeTopic == "":
		return s.broadcast(websocket.TextMessage, notice)
	}
	s.subMu.RLock()
	conns := make([]*conn, 0, len(s.subs[s.ex.NoticeTopic]))
	for c := range s.subs[s.ex.NoticeTopic] {
		conns = append(conns, c)
	}
	s.subMu.RUnlock()
	n := 0
	for _, c := range conns {
		if c.send(outMsg{typ: websocket.TextMessage, data: notice}, nil) {
			n++
		}
	}
	return n
}

// SendHeartbeatRequest sends the dialect's heartbeat request (Deribit's
// test_request) to every connection and returns how many it was queued
// to; 0 when the dialect has none. Unlike the heartbeat a client asks for
// (Deribit's public/set_heartbeat), no answer is enforced.
func (s *Server) SendHeartbeatRequest() int {
	if len(s.heartbeat) == 0 {
		return 0
	}
	return s.broadcast(websocket.TextMessage, s.heartbeat)
}

// SendBinary sends data as a binary message to every connection and returns
// how many it was queued to.
func (s *Server) SendBinary(data []byte) int {
	return s.broadcast(websocket.BinaryMessage, data)
}

// SendOversized sends one text message of exactly n bytes (a JSON string
// when n >= 2) to every connection and returns how many it was queued to.
func (s *Server) SendOversized(n int) int {
	data := bytes.Repeat([]byte{'x'}, max(n, 0))
	if n >= 2 {
		data[0], data[n-1] = '"', '"'
	} else if n == 1 {
		data[0] = '1'
	}
	return s.broadcast(websocket.TextMessage, data)
}
