package kraken

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// Kraken's dead man's switch, cancel_all_orders_after
// (https://docs.kraken.com/api/docs/websocket-v2/cancel_after): a call
// with timeout N (seconds) cancels every open order of the account N
// seconds later unless another call comes first; timeout 0 disarms it.
// The page recommends a call every 15 to 30 seconds with a timeout of
// 60. It is a timer, not a flag: left alone it fires.
//
// ArmDeadMansSwitch makes the call through the client, which takes it
// for a session setting (ClassifyMethod below): made again on every new
// connection right after Login, and while it is armed the client keeps
// its connection rather than take its preferred endpoint back. Login's
// goroutine on each connection (client.WhileConnected) makes it again
// every third of its timeout while it stays armed; DisarmDeadMansSwitch
// makes the call with timeout 0, forgetting the setting.

// cancelAfter is the switch's method.
const cancelAfter = "cancel_all_orders_after"

// ArmDeadMansSwitch arms Kraken's dead man's switch on c, whose
// on-connect hook is Login and whose protocol this package's: every open
// order of the account is cancelled timeout after the last call of
// cancel_all_orders_after, which the client makes again every timeout/3
// on every connection it holds, so the orders stand while the program
// is connected. Call it again to change the timeout. timeout is whole
// seconds from 1 s to 86,399 s; Kraken recommends 60 s. Disarm it with
// DisarmDeadMansSwitch before closing c: a Close leaves it armed, and
// Kraken then cancels the orders.
func ArmDeadMansSwitch(ctx context.Context, c *client.Client, timeout time.Duration) error {
	s, err := sessionOf(c)
	if err != nil {
		return err
	}
	secs := int64(timeout / time.Second)
	if timeout%time.Second != 0 || secs < 1 || secs >= 86_400 {
		return fmt.Errorf("kraken: a dead man's switch of %v: want whole seconds from 1s to 86399s", timeout)
	}
	if err := c.Call(ctx, cancelAfter, switchParams(secs), nil); err != nil {
		return fmt.Errorf("kraken: arming the dead man's switch: %w", err)
	}
	s.armed.Store(secs)
	return nil
}

// DisarmDeadMansSwitch disarms Kraken's dead man's switch on c: the
// call with timeout 0, after which it is no longer refreshed nor made on
// a new connection.
func DisarmDeadMansSwitch(ctx context.Context, c *client.Client) error {
	s, err := sessionOf(c)
	if err != nil {
		return err
	}
	s.armed.Store(0) // no refresh races the disarm to re-arm it
	if err := c.Call(ctx, cancelAfter, switchParams(0), nil); err != nil {
		return fmt.Errorf("kraken: disarming the dead man's switch: %w", err)
	}
	return nil
}

// switchParams are the params of a call with timeout secs.
func switchParams(secs int64) json.RawMessage {
	return json.RawMessage(`{"timeout":` + strconv.FormatInt(secs, 10) + `}`)
}

// sessionOf returns the session of c's dialect.
func sessionOf(c *client.Client) (*session, error) {
	d, ok := c.Protocol().(dialect)
	if !ok || d.s == nil {
		return nil, fmt.Errorf("kraken: the client's protocol is %s, not kraken.Protocol()", c.Protocol().Name())
	}
	return d.s, nil
}

// keepSwitch makes the armed switch's call again every third of its
// timeout on the connection ctx belongs to, until that connection ends.
// It runs on the connection's goroutine (client.WhileConnected, from
// Login); a refused call drops the connection, whose successor arms the
// switch again (the client's session settings).
func (s *session) keepSwitch(ctx context.Context, c *client.Client, cfg *loginConfig) error {
	for {
		every := time.Duration(s.armed.Load()) * time.Second / 3
		if every <= 0 {
			every = idleCheck
		}
		fire, stop := cfg.clock.After(every)
		select {
		case <-ctx.Done():
			stop()
			return nil
		case <-fire:
		}
		secs := s.armed.Load()
		if secs == 0 {
			continue
		}
		err := c.Call(ctx, cancelAfter, switchParams(secs), nil)
		switch {
		case ctx.Err() != nil:
			return nil // the connection ended: its successor arms it anew
		case err != nil && s.armed.Load() != 0:
			return fmt.Errorf("kraken: refreshing the dead man's switch: %w", err)
		}
	}
}

// idleCheck is how often a connection whose switch is not armed looks
// whether it was since.
const idleCheck = 5 * time.Second

// ClassifyMethod tells a session setting: a call of
// cancel_all_orders_after arms the switch (timeout > 0), which the
// client makes again on every new connection and which holds the
// connection, or disarms it (timeout 0).
func (dialect) ClassifyMethod(method string, params []byte) protocol.MethodClass {
	if method != cancelAfter {
		return protocol.MethodClass{}
	}
	var p struct {
		Timeout *int64 `json:"timeout"`
	}
	if json.Unmarshal(params, &p) != nil || p.Timeout == nil {
		return protocol.MethodClass{}
	}
	return protocol.MethodClass{
		Session:   protocol.SessionSetting{Key: cancelAfter, Clear: *p.Timeout == 0},
		IsSession: true,
	}
}
