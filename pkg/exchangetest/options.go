package exchangetest

import (
	"time"

	"go.uber.org/zap"

	"github.com/wsfan/wsfan/pkg/venue"
)

// Option configures a Server in NewServer.
type Option func(*config)

type config struct {
	topics   map[string]struct{} // nil: every topic is valid
	batchCap int
	topicCap int // topics one connection may hold; 0: no cap

	quietAccepts bool // Ethereal: answer only refusals
	logger       *zap.Logger
	addr         string // "": 127.0.0.1 on a free port

	// Logins and limits: login.go, ratelimit.go, bearer.go.
	now    func() time.Time
	login  venue.Authenticator // nil: the exchange's, accepting anyone
	rate   *rateConfig         // nil: no limit
	bearer string              // "": no handshake check
}

func defaultConfig() config {
	return config{logger: zap.NewNop(), now: time.Now}
}

// WithAddr has the server listen on addr, host:port (a replay server's
// -listen). Default: 127.0.0.1 on a free port.
func WithAddr(addr string) Option { return func(c *config) { c.addr = addr } }

// WithTopics sets the topics the server knows; a subscription to any other
// topic is refused (omitted from a Thalex/Deribit acknowledgement, an error
// for Ethereum and Ethereal). The default accepts every topic.
// Calling it more than once adds to the set.
func WithTopics(topics ...string) Option {
	return func(c *config) {
		if c.topics == nil {
			c.topics = make(map[string]struct{}, len(topics))
		}
		for _, t := range topics {
			c.topics[t] = struct{}{}
		}
	}
}

// WithBatchCap caps the channels of one subscribe request and the length
// of a batch array at n; a larger request gets error -32600. The default,
// 0, is unlimited.
func WithBatchCap(n int) Option {
	return func(c *config) { c.batchCap = n }
}

// WithTopicCap caps the topics one channel-dialect connection may hold at
// n, as exchanges cap subscriptions per connection: the channels of a
// subscribe request past the cap are refused (omitted from the
// acknowledgement; Ethereal: {"ok":false,"code":"SUBSCRIPTION_LIMIT_EXCEEDED"}).
// Only the topics the exchange counts take room (Ethereal: its account
// streams, not market data; venue.Exchange.LimitedTopic). The default, 0,
// is unlimited.
func WithTopicCap(n int) Option {
	return func(c *config) { c.topicCap = n }
}

// WithQuietAccepts makes an Ethereal server answer only the events it
// refuses, as the service may (its public material does not say whether
// it answers a success): the client then takes a request nobody answered
// as accepted after its AcceptAfter. The default answers every event.
func WithQuietAccepts() Option {
	return func(c *config) { c.quietAccepts = true }
}

// WithLogger sets the logger for connection events and errors (never per
// frame). The default is zap.NewNop().
func WithLogger(l *zap.Logger) Option {
	return func(c *config) {
		if l != nil {
			c.logger = l
		}
	}
}
