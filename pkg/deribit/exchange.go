package deribit

import (
	"strings"
	"time"

	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/venue"
)

// exchange is how Deribit's servers behave beyond the wire format, for
// test servers and the sidecar's demo.
var exchange = &venue.Exchange{
	// A request over the rate limit: error 10028, "too_many_requests".
	Throttled: &protocol.Error{Code: codeThrottled, Message: "too_many_requests"},
	// "… we immediately send a too_many_requests (code 10028) or similar
	// error and terminate the session" (docs.deribit.com/articles/rate-limits).
	ThrottleEndsSession: true,
	// Every response carries usIn, usOut, usDiff and testnet.
	AppendResult: func(dst, id, result []byte, received time.Time) []byte {
		return AppendResult(dst, id, result, received, time.Now(), true)
	},
	// A request frame over the size limit (reported near 32 KiB; see
	// MaxFrameBytes) is answered with an error that has no id.
	MaxRequestBytes: 32 << 10,
	TooLarge: func(dst []byte, received time.Time) []byte {
		return appendStamped(append(dst, `{"jsonrpc":"2.0","error":{"code":-32600,"message":"request entity too large"}`...),
			received, time.Now(), true)
	},
	Login: func() venue.Authenticator { return NewServerLogin("", "") },
	// The documentation's "Session management" and "Authentication"
	// methods that change the session, and the private subscriptions.
	SessionMethods: []string{"public/auth", "public/exchange_token", "public/fork_token", "private/logout",
		"private/enable_cancel_on_disconnect", "private/disable_cancel_on_disconnect", "private/subscribe"},
	Feed: func(seed uint64) venue.Simulation { return newFeed(seed) },
	Methods: map[string]func([]string, time.Time) any{
		"public/get_instruments": func(instruments []string, _ time.Time) any {
			out := make([]instrument, len(instruments))
			for i, name := range instruments {
				base, _, _ := strings.Cut(name, "-")
				out[i] = instrument{Name: name, Kind: "future", TickSize: 0.5, MinAmount: 10, BaseCurrency: base}
			}
			return out
		},
		"public/get_time": func(_ []string, now time.Time) any { return now.UnixMilli() },
		// Cancel-on-disconnect answers "ok" (session management); the
		// test server cancels no orders: it has none.
		enableCancelOnDisconnect:  func([]string, time.Time) any { return "ok" },
		disableCancelOnDisconnect: func([]string, time.Time) any { return "ok" },
		// public/test answers a heartbeat's test_request.
		"public/test": func([]string, time.Time) any { return map[string]string{"version": "1.2.26"} },
	},
}

// instrument is an instrument of public/get_instruments, the fields
// programs read first.
type instrument struct {
	Name         string  `json:"instrument_name"`
	Kind         string  `json:"kind"`
	TickSize     float64 `json:"tick_size"`
	MinAmount    float64 `json:"min_trade_amount"`
	BaseCurrency string  `json:"base_currency"`
}
