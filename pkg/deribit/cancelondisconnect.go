package deribit

import (
	"encoding/json"

	"github.com/wsfan/wsfan/pkg/protocol"
)

// Cancel-on-disconnect (docs.deribit.com, session management:
// private/enable_cancel_on_disconnect and private/disable_cancel_on_disconnect)
// cancels the orders of a connection that ends other than by
// private/logout. Its scope is "connection" unless the request says
// "account": a setting of the connection's scope is lost with the
// connection, so the client makes it again on every new one
// (protocol.MethodClass.Session) before handing it out. One of the account's
// scope is kept by Deribit for every new connection, and needs nothing.
const (
	enableCancelOnDisconnect  = "private/enable_cancel_on_disconnect"
	disableCancelOnDisconnect = "private/disable_cancel_on_disconnect"
)

// accountSetting tells cancel-on-disconnect of the account's scope,
// which a standby connection's loss would trigger.
func accountSetting(method string, params []byte) bool {
	if method != enableCancelOnDisconnect {
		return false
	}
	var p struct {
		Scope string `json:"scope"`
	}
	return json.Unmarshal(params, &p) == nil && p.Scope == "account"
}

// sessionSetting tells cancel-on-disconnect of the connection's scope.
func sessionSetting(method string, params []byte) (protocol.SessionSetting, bool) {
	if method != enableCancelOnDisconnect && method != disableCancelOnDisconnect {
		return protocol.SessionSetting{}, false
	}
	var p struct {
		Scope string `json:"scope"`
	}
	if len(params) > 0 && json.Unmarshal(params, &p) != nil || p.Scope == "account" {
		return protocol.SessionSetting{}, false
	}
	return protocol.SessionSetting{Key: "cancel_on_disconnect", Clear: method == disableCancelOnDisconnect}, true
}
