package client

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	"go.uber.org/zap"

	"github.com/wsfan/wsfan/pkg/protocol"
)

// sessionSettings are the calls of the program that configured its
// session (protocol.MethodClass.Session: cancel-on-disconnect), in the order
// they were made, to make again on every new connection. Any goroutine
// may record; the supervisor replays, during connect.
type sessionSettings struct {
	mu    sync.Mutex
	calls []settingCall
}

// settingCall is one recorded setting: the call that made it.
type settingCall struct {
	key    string
	method string
	params []byte // a copy, owned here
}

// record keeps the call of a setting the server accepted, replacing an
// earlier one of the same key; a Clear forgets it.
func (s *sessionSettings) record(set protocol.SessionSetting, method string, params []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = slices.DeleteFunc(s.calls, func(c settingCall) bool { return c.key == set.Key })
	if !set.Clear {
		s.calls = append(s.calls, settingCall{key: set.Key, method: method, params: slices.Clone(params)})
	}
}

// holds reports whether a setting is recorded.
func (s *sessionSettings) holds() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.calls) > 0
}

// snapshot returns the recorded calls.
func (s *sessionSettings) snapshot() []settingCall {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

// callSetting makes a call the dialect names a session setting on cn and
// records it once the server accepted it. A setting that lets the
// connection be silent for at most MaxSilence is refused before it is
// sent when the client's pings are not at least twice as frequent: the
// server would take a healthy connection for dead (Thalex cancels the
// orders). Every setting made is recorded on cn (conn.settings: closing
// cn would set it off); calls of the on-connect hook are not recorded
// for the client, as the hook makes them on every connection itself.
func (c *Client) callSetting(ctx context.Context, cn *conn, set protocol.SessionSetting, method string, params []byte) (json.RawMessage, error) {
	if err := c.checkSetting(set, method); err != nil {
		return nil, err
	}
	res, err := cn.call(ctx, method, params)
	if err == nil {
		cn.settings.record(set, method, params)
		if ctx.Value(connectingKey{}) == nil {
			c.settings.record(set, method, params)
		}
	}
	return res, err
}

// checkSetting refuses a setting that lets the connection be silent for
// less than twice the client's ping interval (see callSetting).
func (c *Client) checkSetting(set protocol.SessionSetting, method string) error {
	if d := set.MaxSilence; d > 0 && (c.cfg.pingInterval <= 0 || c.cfg.pingInterval > d/2) {
		return fmt.Errorf("call %s: the server takes the connection for dead after %v of silence, and the client pings every %v: "+
			"set client.WithPing to %v or less", method, d, c.cfg.pingInterval, d/2)
	}
	return nil
}

// replaySettings makes the recorded settings again on a new connection,
// before it is handed out. A refusal fails the connection: a session
// without the program's cancel-on-disconnect must not carry its orders.
func (c *Client) replaySettings(ctx context.Context, cn *conn) error {
	for _, s := range c.settings.snapshot() {
		if _, err := cn.call(ctx, s.method, s.params); err != nil {
			return fmt.Errorf("making %s again on the new connection: %w", s.method, err)
		}
		cn.settings.record(protocol.SessionSetting{Key: s.key}, s.method, s.params)
		c.log.Debug("session setting made again", zap.String("method", s.method))
	}
	return nil
}
