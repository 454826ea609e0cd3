package exchangetest

import (
	"bytes"
	"time"

	"github.com/gorilla/websocket"
	"github.com/wsfan/wsfan/pkg/deribit"
	"github.com/wsfan/wsfan/pkg/thalex"
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

// The frames the fault knobs send whatever the dialect; the writer's
// Deribit heartbeat sends deribitTestRequest too.
var (
	thalexReconnect    = thalex.Server().AppendReconnectNotice(nil)
	deribitTestRequest = deribit.Server().AppendHeartbeat(nil)
)

// SendSystemReconnect sends Thalex's "reconnect soon" system notification,
// {"channel_name":"system","notification":{"event":"reconnect"}}, to every
// connection (whatever the dialect) and returns how many it was queued to.
func (s *Server) SendSystemReconnect() int {
	return s.broadcast(websocket.TextMessage, thalexReconnect)
}

// SendHeartbeatRequest sends Deribit's heartbeat test_request to every
// connection (whatever the dialect) and returns how many it was queued to.
// Unlike the heartbeat of public/set_heartbeat, no answer is enforced.
func (s *Server) SendHeartbeatRequest() int {
	return s.broadcast(websocket.TextMessage, deribitTestRequest)
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
