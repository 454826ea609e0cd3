package protocoltest

import (
	"sync"
	"time"

	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// PingDialect is the name of a test dialect: Thalex's wire, plus the
// application keepalive of venues such as OKX and Bybit, a text "ping"
// every PingEvery answered by a text "pong", with a server that closes a
// client silent for PingIdleLimit. It shows that such a venue fits the
// shared code through its Venue's Keepalive, its Classify's
// KindKeepalive and its server's AnswerKeepalive alone. RegisterPingDialect makes it known.
const PingDialect = "pingtest"

// The ping dialect's timings, short for tests.
const (
	PingEvery     = 100 * time.Millisecond
	PingIdleLimit = time.Second
)

var registerPing sync.Once

// RegisterPingDialect registers PingDialect, once however often it is
// called.
func RegisterPingDialect() {
	registerPing.Do(func() {
		protocol.Register(protocol.Dialect{
			Name:     PingDialect,
			Protocol: func() protocol.Protocol { return pingClient{thalex.Protocol()} },
			Server: func() protocol.Server {
				wire, _ := protocol.ServerByName(thalex.Name)
				return pingServer{wire}
			},
		})
	})
}

// pingClient is Thalex's client half with the keepalive.
type pingClient struct{ protocol.Protocol }

func (pingClient) Name() string { return PingDialect }

// Venue is Thalex's with the keepalive.
func (c pingClient) Venue() protocol.Venue { return pingVenue(c.Protocol.Venue()) }

// Classify takes a "pong" for the keepalive's answer, else as Thalex.
func (c pingClient) Classify(frame []byte, f *protocol.Frame) error {
	if string(frame) == "pong" {
		f.Reset()
		f.Kind = protocol.KindKeepalive
		return nil
	}
	return c.Protocol.Classify(frame, f)
}

// pingServer is Thalex's server half with the keepalive's answer.
type pingServer struct{ protocol.Server }

func (pingServer) Name() string { return PingDialect }

// AnswerKeepalive answers "ping" with "pong".
func (pingServer) AnswerKeepalive(frame []byte) ([]byte, bool) {
	if string(frame) == "ping" {
		return []byte("pong"), true
	}
	return nil, false
}

// Venue is Thalex's with the keepalive.
func (s pingServer) Venue() protocol.Venue { return pingVenue(s.Server.Venue()) }

// pingVenue is v with the ping dialect's keepalive.
func pingVenue(v protocol.Venue) protocol.Venue {
	v.Keepalive = protocol.Keepalive{Interval: PingEvery, Frame: []byte("ping"), IdleLimit: PingIdleLimit}
	return v
}
