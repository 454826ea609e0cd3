package thalex

import (
	"strings"
	"time"

	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/venue"
)

// exchange is how Thalex's servers behave beyond the wire format, for
// test servers and the sidecar's demo.
var exchange = &venue.Exchange{
	// A request over the rate limit: error 4, thalex_py's ERROR_CODE_THROTTLE
	// (the message is ours: Thalex documents no text for it).
	Throttled: &protocol.Error{Code: codeThrottled, Message: "throttle exceeded"},
	// The specification's "Session management" methods, and the private
	// subscriptions; and the unsubscribe spellings Thalex's specification
	// does not have (its one method is "unsubscribe", which the sidecar
	// answers itself): a local program's public/ or private/unsubscribe
	// must not reach the shared session under any name.
	SessionMethods: []string{"public/login", "private/set_cancel_on_disconnect", "private/subscribe",
		"public/unsubscribe", "private/unsubscribe", "public/unsubscribe_all", "private/unsubscribe_all"},
	Renamed: map[string]string{"public/unsubscribe": "unsubscribe", "private/unsubscribe": "unsubscribe"},
	// Notices come to connections subscribed to the system channel.
	NoticeTopic: systemChannel,
	Login:       func() venue.Authenticator { return NewServerLogin() },
	Feed:        func(seed uint64) venue.Simulation { return &feed{m: venue.NewMarket(seed)} },
	Methods: map[string]func([]string, time.Time) any{
		"public/instruments": func(instruments []string, _ time.Time) any {
			out := make([]instrument, len(instruments))
			for i, name := range instruments {
				base, _, _ := strings.Cut(name, "-")
				out[i] = instrument{Name: name, Type: "perpetual", Product: "F" + base + "USD", TickSize: 1}
			}
			return out
		},
		"public/system_info": func([]string, time.Time) any {
			return map[string]any{"environment": "demo", "api_version": "2.0"}
		},
		// The specification's example result; what message_rate means
		// is not documented.
		setCancelOnDisconnect: func([]string, time.Time) any { return map[string]int{"message_rate": 50} },
	},
}

// instrument is an instrument of public/instruments, the fields programs
// read first.
type instrument struct {
	Name     string  `json:"instrument_name"`
	Type     string  `json:"type"`
	Product  string  `json:"product"`
	TickSize float64 `json:"tick_size"`
}
