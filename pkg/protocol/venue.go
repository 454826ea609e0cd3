package protocol

import "time"

// Venue is what a venue is, as its documentation states it: numbers,
// shapes and the behaviour families it decides with. Both halves of a
// dialect return the same one (Protocol.Venue, Server.Venue); the client
// reads it once, at Dial, and holds that one value. A zero Venue is a
// venue that documents none of it: no limits, no keepalive of its own,
// one answer per request, and nothing to decide beyond Classify.
type Venue struct {
	// Invalid is why the dialect, as its options configured it, cannot
	// be used (a Deribit heartbeat below Deribit's minimum): Dial
	// refuses it with this error. nil: usable.
	Invalid error

	// Limits are the request budgets that hold for every account, which
	// the client keeps unless the program sets its own
	// (client.WithRateLimit), and the pace of new connections
	// (ConnectMethod), which it always keeps.
	Limits []Limit
	// ConnectionsPerIP is how many connections one IP address may hold
	// (Deribit: 32, "Connection Management Best Practices"; the 33rd is
	// refused with HTTP 429): a pool.Pool or a standby.Standby opens none
	// past it. 0: no cap documented.
	ConnectionsPerIP int
	// MaxBatch is how many calls one JSON-RPC batch array may carry
	// (an Ethereum node's), unless the server was found to take fewer;
	// 0: the venue takes no batch of calls, and each call goes in a
	// frame of its own.
	MaxBatch int
	// AcceptAfter, where the venue's servers may answer a subscribe or
	// unsubscribe only when they refuse it (Ethereal, as far as its
	// public material tells), is how long a request nobody answered
	// waits before it is taken as accepted, until the connection answers
	// a success without an id; from then on its requests are waited for
	// like any others. 0: every request is answered.
	AcceptAfter time.Duration
	// AnswersAll says the venue answers every request, with an id or
	// without (OKX, Kraken: the id is optional, and echoed only where it
	// was sent): a request without one is answered all the same, not
	// taken for a JSON-RPC notification.
	AnswersAll bool
	// Keepalive is the venue's keepalive at the application level, if it
	// wants one beside or instead of WebSocket pings.
	Keepalive Keepalive
	// Resync spaces a topic's resyncs when they repeat (Kraken: 1 s
	// doubling to 30 s): a topic resubscribed for a fresh snapshot again
	// and again (a book whose checksum keeps failing) would otherwise be
	// resubscribed as fast as the snapshots come, into the venue's rate
	// limit. Zero: resyncs go at once.
	Resync Backoff

	// The behaviour families: what the venue decides, each nil where it
	// decides nothing of the kind.

	// Errors classifies the venue's error codes.
	Errors ErrorClassifier
	// Methods classifies the venue's methods.
	Methods MethodClassifier
	// Messages reads what the venue documents inside its messages.
	Messages MessageReader
	// Recoverer fetches what a topic missed while its connection was
	// down, where the venue does not replay it (an Ethereum node).
	Recoverer Recoverer
	// TopicAcks reads the answers of a venue that answers each topic of
	// a request in a frame of its own (OKX, Kraken).
	TopicAcks TopicAcking
}

// Keepalive is a venue's keepalive at the application level (OKX's text
// "ping", answered "pong"; Kraken's {"method":"ping"}): the client's
// writer sends Frame every Interval; the dialect's Classify takes the
// answer for a KindKeepalive, so a bare "pong" is not a malformed frame.
// Liveness is still the WebSocket ping's.
type Keepalive struct {
	// Interval is how often the client sends Frame: under the venue's
	// idle limit, with room for a slow link. 0: no keepalive.
	Interval time.Duration
	// Frame is the frame the client sends.
	Frame []byte
	// IdleLimit is how long a connection may go without a frame from
	// its client before the venue closes it (OKX: 30 s); 0: no limit.
	// pkg/exchangetest enforces it.
	IdleLimit time.Duration
}

// Backoff is a wait that starts at First and doubles with each repeat
// up to Most; a repeat after a quiet spell longer than the last wait
// plus Most starts again with no wait.
type Backoff struct {
	First, Most time.Duration
}

// ErrorClassifier is the behaviour family that says what a venue's error
// codes mean to the client. It runs on refusals, not on the hot path.
type ErrorClassifier interface {
	// ClassifyError tells what the error of code and message means.
	ClassifyError(code int, message string) ErrorClass
}

// ErrorClass is what an error means to the client; the zero value is an
// error the client hands to the caller as it is.
type ErrorClass struct {
	// Throttled: the request was refused for the venue's rate limit; a
	// subscribe so refused is sent again once the pace allows, not taken
	// as every topic refused.
	Throttled bool
	// EndsSession: the server ends the session with this refusal
	// (Deribit's 10028 too_many_requests); the client reconnects no
	// sooner than Refill, the time the venue's budget needs to refill,
	// where its usual backoff (100 ms) would meet a budget still empty.
	EndsSession bool
	Refill      time.Duration
	// BatchTooLarge: the server refused a batch array over its cap, after
	// which the batch's other requests go unanswered (go-ethereum's
	// -32600 "batch too large"); the client sends them again in smaller
	// batches.
	BatchTooLarge bool
	// ResponseTooLarge: a call of a batch was answered with an error for
	// the batch's response budget (go-ethereum's -32003); the client sends
	// such calls again in smaller batches.
	ResponseTooLarge bool
	// RangeTooLarge: a Recoverer's fetch was refused for the size of what
	// it asked (a provider's cap on eth_getLogs results); the client
	// fetches the two halves of the range instead.
	RangeTooLarge bool
}

// MethodClassifier is the behaviour family that says what a call of one
// of the venue's methods is to the client.
type MethodClassifier interface {
	// ClassifyMethod tells what a call of method with params (nil when
	// only the method is known) is.
	ClassifyMethod(method string, params []byte) MethodClass
}

// MethodClass is what a call is to the client; the zero value is a call
// made once, on the connection it was given to.
type MethodClass struct {
	// ReadOnly: the venue documents the method as reading only (market
	// data, a node's state): a call whose connection died before its
	// answer is made again on the next connection. Any other, an order
	// above all, never is.
	ReadOnly bool
	// Session, when IsSession, is a call that configures the session of
	// one connection and is lost with it (Deribit's
	// private/enable_cancel_on_disconnect, whose default scope is the
	// connection; Thalex's private/set_cancel_on_disconnect; Kraken's
	// cancel_all_orders_after): the client makes it again on every new
	// connection, after the on-connect hook's login and before the
	// connection is handed out, so a setting the program made is never
	// silently lost to a reconnect.
	Session   SessionSetting
	IsSession bool
	// Account: the call's setting covers the whole account and acts when
	// any one of its connections is lost (Deribit's cancel-on-disconnect
	// of the "account" scope). A standby.Standby refuses it: a standby
	// connection that dies would cancel the account's orders.
	Account bool
}

// SessionSetting describes one session-configuring call (MethodClass).
type SessionSetting struct {
	// Key names the setting: a later call with the same key replaces it.
	Key string
	// Clear is true for a call that undoes the setting (Deribit's
	// private/disable_cancel_on_disconnect): it is not made again.
	Clear bool
	// MaxSilence is the most silence the setting allows the connection
	// before the server takes it for dead and acts (Thalex's
	// timeout_secs: its orders are cancelled); 0 for none. The client
	// refuses the call when its pings are not at least twice as frequent.
	MaxSilence time.Duration
}

// MessageReader is the behaviour family that reads what a venue documents
// inside its messages, beside what Classify and Sequence read. Each
// method runs on the reader for every message it applies to: it should
// allocate nothing. A reader that reads only some of it embeds
// ReadsNothing for the rest.
type MessageReader interface {
	// AppendIdentity appends to dst what identifies data within its
	// topic (Deribit: a book change's change_id, a trade's trade_id;
	// Ethereum: a head's hash; a log's block hash, index and removed
	// flag), so a message that reaches the client on several connections
	// (standby.Dial's legs) is delivered once even where the connections'
	// servers spell it differently (two Ethereum nodes). It reports false
	// for a message that has none, which is then told apart by its whole
	// content.
	AppendIdentity(dst, data []byte) ([]byte, bool)
	// CopyBytes reports whether frame is a notification in the venue's
	// compact layout that reads the same, byte for byte, on every
	// connection but for a part the venue gives each connection (an
	// Ethereum subscription id), and returns the part that is the same in
	// every connection's copy. A composite whose connections carry the
	// same subscriptions (package standby) then drops a copy another
	// connection delivered by a hash of those bytes, before classifying
	// it. It returns false for anything else, which is then classified as
	// usual. It must not keep frame.
	CopyBytes(frame []byte) ([]byte, bool)
	// Link reads the height, hash and parent's hash of a message of a
	// topic whose messages form a chain (an Ethereum node's newHeads), so
	// the client can tell a reorganisation from an extension.
	Link(data []byte) (number uint64, hash, parent [32]byte, ok bool)
	// Retracted reports whether a message of a Retracts topic takes back
	// an earlier one (a log of a block a reorganisation replaced, sent
	// again with "removed": true).
	Retracted(data []byte) bool
}

// ReadsNothing is a MessageReader that reads none of a message: embed it
// in a reader that reads only some.
type ReadsNothing struct{}

// AppendIdentity reports no identity: the whole message identifies it.
func (ReadsNothing) AppendIdentity(dst, _ []byte) ([]byte, bool) { return dst, false }

// CopyBytes reports no copy layout.
func (ReadsNothing) CopyBytes([]byte) ([]byte, bool) { return nil, false }

// Link reports no chain.
func (ReadsNothing) Link([]byte) (uint64, [32]byte, [32]byte, bool) {
	return 0, [32]byte{}, [32]byte{}, false
}

// Retracted reports no retraction.
func (ReadsNothing) Retracted([]byte) bool { return false }

// Recoverer is the behaviour family that fills in a topic's messages
// missed while its connection was down, where the venue does not replay
// them (an Ethereum node's subscriptions: the client fetches
// eth_blockNumber, then eth_getBlockByNumber for each missed head,
// eth_getLogs over the missed blocks for a logs filter) before the live
// messages. It applies to Topic.Backfill topics.
type Recoverer interface {
	// Position is a message's place in its topic, increasing along it
	// (a head's number; a log's block and index).
	Position(t *Topic, data []byte) (pos uint64, ok bool)
	// Current is the call whose result tells how far the topic can have
	// got by now; ParseCurrent reads it as the last position it can
	// have reached (the current block's last).
	Current() Call
	ParseCurrent(t *Topic, result []byte) (uint64, error)
	// Distance is how far apart two positions are in the venue's own
	// unit (blocks): what client.WithBackfill bounds.
	Distance(t *Topic, after, through uint64) uint64
	// Fetch is the calls whose results are the topic's messages after
	// position after, through position through; Messages turns their
	// results, in the calls' order, into those messages, in order.
	Fetch(t *Topic, after, through uint64) []Call
	Messages(t *Topic, after, through uint64, results [][]byte) ([][]byte, error)
}
