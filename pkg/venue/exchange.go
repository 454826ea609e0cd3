package venue

import (
	"encoding/json"
	"time"

	"github.com/wsfan/wsfan/pkg/protocol"
)

// Exchange is how an exchange's servers behave beyond the wire format,
// after its documentation: how they refuse a request over their rate
// limit, how they stamp a response, the login they check, the market data
// they publish and the public methods they answer. pkg/exchangetest serves
// it to behave like the service, for tests and the sidecar's demo. Each
// exchange package registers one with its Dialect; a nil field takes the
// plain JSON-RPC behaviour.
type Exchange struct {
	// Throttled is the refusal of a request over the rate limit. Default:
	// -32005 "limit exceeded".
	Throttled *protocol.Error
	// ThrottleEndsSession: the servers close the connection once they
	// have sent Throttled (Deribit: "immediately send a too_many_requests
	// (code 10028) … and terminate the session").
	ThrottleEndsSession bool
	// TopicLimit is the refusal of a subscribe past the topics one
	// connection may hold, where the servers refuse it with an error
	// (Ethereal's SUBSCRIPTION_LIMIT_EXCEEDED). Default: the topics past
	// the limit are left out of the acknowledgement.
	TopicLimit *protocol.Error
	// UnknownTopic and LoginRequired refuse a topic the servers do not
	// publish, and a private topic on a connection not logged in, where
	// the servers answer each topic of a request in a frame of its own
	// (protocol.TopicAnswering: OKX's 60018 and 60011). Default: the
	// topic is left out of the acknowledgement.
	UnknownTopic, LoginRequired *protocol.Error
	// ServedOn reports whether a connection to the URL path path serves
	// topic, where the venue serves its topics on several paths of one
	// host (OKX's /ws/v5/public, /ws/v5/private, /ws/v5/business); a
	// topic it does not serve is refused with UnknownTopic, as the venue
	// refuses it. nil: every path serves every topic.
	ServedOn func(path, topic string) bool
	// RequestLimit is the budget of requests each connection has, where
	// the venue documents one per connection (OKX: 480 subscribe,
	// unsubscribe and login requests an hour); a request past it is
	// refused with Throttled. exchangetest.WithRateLimit replaces it.
	// nil: no limit.
	RequestLimit *protocol.Limit
	// LimitedTopic reports whether a topic counts toward the topics one
	// connection may hold (Ethereal: its account streams, not market
	// data). nil: every topic counts.
	LimitedTopic func(topic string) bool
	// AppendResult appends the response to request id carrying result
	// (raw JSON), for a request received at received. Default: the
	// server half's AppendResult.
	AppendResult func(dst, id, result []byte, received time.Time) []byte
	// Login returns a new server half of the exchange's login, accepting
	// any credentials: the one a test server checks unless given another.
	// nil when the exchange has no login method.
	Login func() Authenticator
	// Feed returns a new made-up feed of the exchange's public market data
	// from seed. nil when the exchange publishes none.
	Feed func(seed uint64) Simulation
	// SessionMethods change the connection's session (log in or out,
	// cancel-on-disconnect) or reach its private channels: a fan-out
	// server never forwards them from one of the programs sharing the
	// connection (the sidecar's default Config.BlockedMethods).
	SessionMethods []string
	// Renamed maps methods other venues spell differently to this
	// venue's own name for the same thing (Thalex: public/unsubscribe →
	// unsubscribe), so a refusal can name the right one.
	Renamed map[string]string
	// MaxRequestBytes is the largest request frame the servers read;
	// a larger one is answered with TooLarge alone, its requests
	// unread. 0: no limit.
	MaxRequestBytes int
	// TooLarge appends the answer to a frame over MaxRequestBytes,
	// received at received.
	TooLarge func(dst []byte, received time.Time) []byte
	// NoticeTopic is the channel the servers' notices (the server half's
	// AppendReconnectNotice) come on, to connections subscribed to it
	// only (Thalex's system); "" sends them to every connection.
	NoticeTopic string
	// MaxBatch is the most requests a batch array may hold; a larger
	// one is answered as go-ethereum answers it (see pkg/exchangetest).
	// 0: no limit.
	MaxBatch int
	// Methods are the public methods a demo server answers, such as the
	// instrument list and the server time, given the feed's instruments.
	Methods map[string]func(instruments []string, now time.Time) any
	// FeedMethods are public methods answered from the feed's own state
	// once a feed has run (a node's latest block), so the answer agrees
	// with what the feed published; Methods answers them before.
	FeedMethods map[string]func(feed Feed, now time.Time) any
}

// Authenticator is the server half of an exchange's login: it checks a
// login request and says how long the login holds. Implementations are
// safe for concurrent use.
type Authenticator interface {
	// Method is the login's method, such as "public/login".
	Method() string
	// Authenticate answers a login with params on connection conn (a
	// number the server gives each connection) at now: the result, and
	// how long the login lasts (0: as long as the connection); or the
	// exchange's refusal.
	Authenticate(conn int, params json.RawMessage, now time.Time) (result any, lifetime time.Duration, err *protocol.Error)
}

// FeedKind is what a feed topic carries.
type FeedKind uint8

const (
	// FeedTicker is a ticker (Ethereal: Ticker).
	FeedTicker FeedKind = iota
	// FeedBook is an order book (Ethereal: L2Book).
	FeedBook
	// FeedOther is any other stream (Ethereum: newHeads).
	FeedOther
)

// FeedTopic is one topic a feed publishes.
type FeedTopic struct {
	Topic      string // the topic, as a client subscribes it
	Instrument string // "" for a topic of no instrument
	Kind       FeedKind
}

// Simulation makes up an exchange's public market data in the
// exchange's own shapes: the feed of pkg/exchangetest and the demo. A
// Simulation is used by one goroutine at a time.
type Simulation interface {
	// Instruments are the instruments the feed publishes unless told
	// others.
	Instruments() []string
	// Topics returns the topics the feed publishes for instruments.
	Topics(instruments []string) []FeedTopic
	// Advance moves the market on to now.
	Advance(now time.Time)
	// Payload returns topic's next payload (JSON): a book's is its next
	// change (see StatefulSimulation).
	Payload(topic FeedTopic) []byte
}

// StatefulSimulation is a Simulation whose books are stateful, as the exchanges'
// are: a new subscriber of a book topic gets the whole book first
// (Snapshot), in the exchange's snapshot frame (Server.SnapshotEnvelope
// around it), and every subscriber then gets the same changes (Payload),
// chained where the exchange chains them.
type StatefulSimulation interface {
	Simulation
	// Snapshot returns the payload of topic's whole book as it stands:
	// what the exchange sends a subscriber right after acknowledging it.
	Snapshot(topic FeedTopic) []byte
	// CrossBook makes topic's next change cross the book and the change
	// after it uncross it (MarketBook.CrossNext), for tests of a book's
	// check.
	CrossBook(topic FeedTopic)
}

// Feed is the old name of Simulation, which client.Feed shared.
//
// Deprecated: use Simulation; Feed goes in the next release.
type Feed = Simulation

// StatefulFeed is the old name of StatefulSimulation.
//
// Deprecated: use StatefulSimulation; StatefulFeed goes in the next
// release.
type StatefulFeed = StatefulSimulation
