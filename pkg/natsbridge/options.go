package natsbridge

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"regexp"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"

	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// Option configures Join.
type Option func(*config)

// CallPolicy decides, on the leader, whether a forwarded call may go
// upstream: a non-nil error refuses it and is returned to the caller
// (wrapped in ErrMethodNotAllowed).
type CallPolicy func(method string) error

// LeaderHook runs on its own goroutine each time this member becomes the
// leader; ctx ends when it steps down. The member waits for it to return
// only in Close, so it must return soon after ctx ends.
type LeaderHook func(ctx context.Context, epoch uint64)

type config struct {
	id          string
	dial        Dialer
	proto       protocol.Protocol // WithProtocol's
	leaseTTL    time.Duration
	grace       time.Duration
	wantTTL     time.Duration
	lastValue   bool
	replicas    int
	lvcStorage  jetstream.StorageType
	delivery    []client.DeliveryOption
	reqTimeout  time.Duration
	maxCalls    int
	policy      CallPolicy
	onLeader    LeaderHook
	logger      *zap.Logger
	backoffBase time.Duration
	backoffMax  time.Duration
	yieldAfter  time.Duration
	// silentFactor and silentFloor are WithSilentAfter's.
	silentFactor int
	silentFloor  time.Duration
	lateAfter    time.Duration // WithLateAfter's
}

// Defaults of the options.
const (
	DefaultLeaseTTL       = 2 * time.Second
	DefaultGrace          = 5 * time.Second
	DefaultWantTTL        = 15 * time.Second
	DefaultBufferSize     = 1024
	DefaultRequestTimeout = 30 * time.Second
	DefaultMaxCalls       = 256
	DefaultYieldAfter     = time.Second
)

func defaultConfig() config {
	return config{
		leaseTTL:     DefaultLeaseTTL,
		grace:        DefaultGrace,
		wantTTL:      DefaultWantTTL,
		lastValue:    true,
		replicas:     1,
		lvcStorage:   jetstream.MemoryStorage,
		delivery:     []client.DeliveryOption{client.Buffer(DefaultBufferSize), client.PendingBytes(0)},
		reqTimeout:   DefaultRequestTimeout,
		maxCalls:     DefaultMaxCalls,
		logger:       zap.NewNop(),
		backoffBase:  100 * time.Millisecond,
		backoffMax:   5 * time.Second,
		yieldAfter:   DefaultYieldAfter,
		silentFactor: 10,
		silentFloor:  5 * time.Second,
		lateAfter:    DefaultLateAfter,
	}
}

func (c *config) validate(group string) error {
	if err := CheckGroup(group); err != nil {
		return err
	}
	if c.id == "" {
		c.id = defaultMemberID()
	}
	if !memberRE.MatchString(c.id) {
		return fmt.Errorf("natsbridge: invalid member id %q (want 1-128 of A-Z a-z 0-9 _ = / - .)", c.id)
	}
	if c.leaseTTL < 200*time.Millisecond {
		return fmt.Errorf("natsbridge: lease TTL %v is below 200ms", c.leaseTTL)
	}
	if c.dial != nil && c.proto == nil {
		return errors.New("natsbridge: WithUpstream needs WithProtocol, the dialect the leader parses the group's topics with")
	}
	if c.wantTTL < time.Second {
		return fmt.Errorf("natsbridge: want TTL %v is below 1s", c.wantTTL)
	}
	c.maxCalls = max(c.maxCalls, 1)
	c.replicas = max(c.replicas, 1)
	return nil
}

var unsafeID = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// defaultMemberID is the host name, the process id and a random suffix,
// so two members never share an id.
func defaultMemberID() string {
	host, _ := os.Hostname()
	host = unsafeID.ReplaceAllString(host, "-")
	if len(host) > 64 {
		host = host[:64]
	}
	var r [4]byte
	_, _ = rand.Read(r[:])
	return fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(r[:]))
}

// WithUpstream makes the member a candidate for leadership: when it wins
// the lease it dials the upstream with d, subscribes to what the group
// wants and publishes it. Default: none, the member only consumes.
func WithUpstream(d Dialer) Option { return func(c *config) { c.dial = d } }

// WithProtocol is the dialect a leader parses the group's wanted topics
// with, each once, before its upstream subscribes them (a client.Holder
// takes parsed topics); a topic it cannot parse is refused to the group.
// Required with WithUpstream (Join refuses a candidate without it): the
// upstream's own dialect. Default: none.
func WithProtocol(p protocol.Protocol) Option { return func(c *config) { c.proto = p } }

// WithMemberID names the member (a KV key: letters, digits, _ = / - and
// inner dots). Default: host name, process id and a random suffix.
func WithMemberID(id string) Option { return func(c *config) { c.id = id } }

// WithLeaseTTL sets the leader lease's time to live, which bounds the
// takeover time when a leader dies. The leader renews every TTL/4 and
// steps down (drops its upstream) when it could not renew for TTL/2. It
// applies when this member creates the group's lease bucket; members
// that find the bucket use its TTL. Default: 2s; at least 200ms.
func WithLeaseTTL(d time.Duration) Option { return func(c *config) { c.leaseTTL = d } }

// WithYieldAfter sets how long the leader's upstream may stay down (a
// dial that failed, a connection lost and not yet back; noticed by the
// upstream's own liveness checks) before the leader gives the lease up,
// so that a member whose path to the upstream works takes over. A member
// that yielded does not campaign again until a probe dial of its own
// path connects (once after the lease TTL, then with backoff up to 10s).
// 0 never yields. Default: 1s.
func WithYieldAfter(d time.Duration) Option { return func(c *config) { c.yieldAfter = d } }

// WithGrace sets how long the leader keeps an upstream subscription after
// no member wants it any more. Default: 5s.
func WithGrace(d time.Duration) Option { return func(c *config) { c.grace = d } }

// WithWantTTL sets how long a member's announced topics outlive the
// member if it dies without leaving; it re-announces every TTL/3. It
// applies when this member creates the group's wants bucket. Default:
// 15s; at least 1s.
func WithWantTTL(d time.Duration) Option { return func(c *config) { c.wantTTL = d } }

// WithLastValue says whether Subscribe delivers each topic's cached last
// value before the live stream. Default: true.
func WithLastValue(on bool) Option { return func(c *config) { c.lastValue = on } }

// WithReplicas sets the JetStream replicas of the lease, wants and
// last-value streams this member creates (clustered NATS). Default: 1.
func WithReplicas(n int) Option { return func(c *config) { c.replicas = n } }

// WithLastValueStorage sets the storage of the last-value cache stream
// this member creates. Default: jetstream.MemoryStorage (the lease and
// the wants are always on file, so they survive a NATS restart).
func WithLastValueStorage(s jetstream.StorageType) Option {
	return func(c *config) { c.lvcStorage = s }
}

// WithDelivery sets every subscription's delivery, with pkg/client's own
// options (client.Buffer, client.Overflow, client.PendingBytes), which
// mean here what they mean there. Default: client.Buffer(DefaultBufferSize),
// client.Overflow(client.DropOldest), and no byte limit
// (client.PendingBytes(0)): the count alone bounds the buffer.
func WithDelivery(opts ...client.DeliveryOption) Option {
	return func(c *config) { c.delivery = append(c.delivery, opts...) }
}

// WithRequestTimeout bounds Subscribe and CallRaw when their context has
// no earlier deadline, and each call the leader forwards upstream.
// Default: 30s.
func WithRequestTimeout(d time.Duration) Option { return func(c *config) { c.reqTimeout = d } }

// WithMaxCalls caps the calls the leader forwards upstream at once; more
// are refused with ErrBusy. Default: 256.
func WithMaxCalls(n int) Option { return func(c *config) { c.maxCalls = n } }

// WithCallPolicy sets the leader's check of forwarded calls (the
// sidecar's blocked methods). Default: every method is forwarded.
func WithCallPolicy(p CallPolicy) Option { return func(c *config) { c.policy = p } }

// WithLeaderHook sets a function run each time this member becomes the
// leader. Default: none.
func WithLeaderHook(h LeaderHook) Option { return func(c *config) { c.onLeader = h } }

// WithLogger sets the logger for state changes and errors (never one line
// per message). Default: zap.NewNop().
func WithLogger(l *zap.Logger) Option {
	return func(c *config) {
		if l != nil {
			c.logger = l
		}
	}
}
