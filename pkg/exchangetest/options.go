package exchangetest

import (
	"time"

	"go.uber.org/zap"
)

// Option configures a Server in NewServer.
type Option func(*config)

type config struct {
	topics      map[string]struct{} // nil: every topic is valid
	credentials bool
	key, secret string
	batchCap    int
	topicCap    int // topics one connection may hold; 0: no cap
	logger      *zap.Logger

	// Logins and limits: login.go, login_thalex.go, login_deribit.go,
	// ratelimit.go, bearer.go.
	now        func() time.Time
	skew       time.Duration
	tokenTTL   time.Duration
	thalexKeys map[string]thalexKey // by key id; nil: any login
	rate       *rateConfig          // nil: no limit
	bearer     string               // "": no handshake check
}

func defaultConfig() config {
	return config{logger: zap.NewNop(), now: time.Now, skew: 30 * time.Second, tokenTTL: 900 * time.Second}
}

// WithTopics sets the topics the server knows; a subscription to any other
// topic is refused (omitted from a Thalex/Deribit acknowledgement, an error
// for Ethereum, ignored by Ethereal). The default accepts every topic.
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

// WithCredentials makes Deribit's public/auth check the client id and
// secret: the secret itself (grant client_credentials) or a signature made
// with it (grant client_signature). The default accepts any login. Thalex
// logins are checked with WithThalexKey.
func WithCredentials(key, secret string) Option {
	return func(c *config) {
		c.credentials = true
		c.key, c.secret = key, secret
	}
}

// WithBatchCap caps the channels of one Thalex/Deribit subscribe request and
// the length of an Ethereum batch array at n; a larger request gets error
// -32600. The default, 0, is unlimited.
func WithBatchCap(n int) Option {
	return func(c *config) { c.batchCap = n }
}

// WithTopicCap caps the topics one Thalex/Deribit connection may hold at
// n, as exchanges cap subscriptions per connection: the channels of a
// subscribe request past the cap are refused (omitted from the
// acknowledgement). The default, 0, is unlimited.
func WithTopicCap(n int) Option {
	return func(c *config) { c.topicCap = n }
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
