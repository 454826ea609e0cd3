package thalex

import (
	"encoding/json"
	"time"

	"github.com/wsfan/wsfan/pkg/protocol"
)

// setCancelOnDisconnect puts the session in "non-persistent" mode: its
// orders are cancelled when the connection ends, and the session must
// send something at least every timeout_secs or the connection is taken
// for dead ("A WebSocket ping suffices"; Thalex API description,
// private/set_cancel_on_disconnect, whose example is 10; thalex_py pings
// every 5 s). It belongs to the connection, so the client makes it again
// on every new one (protocol.MethodClass.Session), and refuses it while its
// pings are not at least twice as frequent as the timeout.
const setCancelOnDisconnect = "private/set_cancel_on_disconnect"

// sessionSetting tells a call of private/set_cancel_on_disconnect.
func sessionSetting(method string, params []byte) (protocol.SessionSetting, bool) {
	if method != setCancelOnDisconnect {
		return protocol.SessionSetting{}, false
	}
	var p struct {
		TimeoutSecs float64 `json:"timeout_secs"`
	}
	_ = json.Unmarshal(params, &p) // the server judges malformed params; no timeout is then known
	return protocol.SessionSetting{Key: "cancel_on_disconnect", MaxSilence: time.Duration(p.TimeoutSecs * float64(time.Second))}, true
}
