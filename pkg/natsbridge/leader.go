package natsbridge

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"

	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// leaderEnv is what a leader needs from its member.
type leaderEnv struct {
	nc         *nats.Conn
	subj       subjects
	wants      jetstream.KeyValue
	wantTTL    time.Duration
	lvc        jetstream.Stream
	lvcJS      jetstream.JetStream             // async publisher of last values
	ensureLVC  func(ctx context.Context) error // creates the last-value stream if it is gone
	dial       Dialer
	proto      protocol.Protocol // parses the wanted topics (WithProtocol)
	grace      time.Duration
	reqTimeout time.Duration
	maxCalls   int
	policy     CallPolicy
	log        *zap.Logger
	stats      *stats
	newBackoff func() *backoff.ExponentialBackOff
	memberID   string
	leaseTTL   time.Duration
	yieldAfter time.Duration
	// parsedHere returns a wanted topic as a subscription of this
	// process's member parsed it, nil when none did (wantSet.parsedTopic).
	parsedHere func(topic string) *protocol.Topic
}

func (m *Member) leaderEnv() leaderEnv {
	return leaderEnv{
		nc:         m.nc,
		subj:       m.subj,
		wants:      m.res.wants,
		wantTTL:    m.res.wantTTL,
		lvc:        m.res.lvc,
		lvcJS:      m.lvcJS,
		ensureLVC:  m.ensureLVC,
		dial:       m.cfg.dial,
		proto:      m.cfg.proto,
		parsedHere: m.wants.parsedTopic,
		grace:      m.cfg.grace,
		reqTimeout: m.cfg.reqTimeout,
		maxCalls:   m.cfg.maxCalls,
		policy:     m.cfg.policy,
		log:        m.log,
		stats:      &m.stats,
		newBackoff: m.newBackoff,
		memberID:   m.cfg.id,
		leaseTTL:   m.res.leaseTTL,
		yieldAfter: m.cfg.yieldAfter,
	}
}

// leader is one term of leadership. Its run goroutine dials the upstream,
// serves calls and starts the goroutine that follows the group's wants,
// which starts one goroutine per wanted topic, and the watcher that
// reports the upstream's state to the group and yields the term when
// the upstream stays down (watchUpstream, watch.go). When ctx ends, run drops the
// upstream before anything else (closing dropped), then waits for every
// goroutine of the term (closing done). Every use of the upstream is
// checked against the fence first (fence.go).
type leader struct {
	env      leaderEnv
	ctx      context.Context // ends with the term
	yield    context.CancelCauseFunc
	fence    *fence
	epoch    string // HeaderEpoch's value
	lvc      *lvcWriter
	up       client.Holder // set by run (under mu) before any topic or call goroutine starts
	inflight chan struct{} // one token per call being forwarded
	dropped  chan struct{} // closed once the upstream is closed (or was never dialed)
	done     chan struct{} // closed when every goroutine of the term has ended

	dialFailed atomic.Bool // a dial of this term failed and none succeeded since

	// mu protects the following (and up's write).
	mu      sync.Mutex
	topics  map[string]*leaderTopic // topics with a goroutine
	seqs    map[string]uint64       // the last sequence of each topic in this term
	refused map[string]string       // topics the upstream refused, and why
	closing bool                    // no goroutine starts once set
	wg      sync.WaitGroup          // every goroutine but run; Add under mu while !closing
}

func newLeader(ctx context.Context, env leaderEnv, epoch uint64, f *fence, yield context.CancelCauseFunc) *leader {
	e := strconv.FormatUint(epoch, 10)
	return &leader{
		env:      env,
		ctx:      ctx,
		yield:    yield,
		fence:    f,
		epoch:    e,
		lvc:      newLVCWriter(env, e),
		inflight: make(chan struct{}, env.maxCalls),
		dropped:  make(chan struct{}),
		done:     make(chan struct{}),
		topics:   make(map[string]*leaderTopic),
		seqs:     make(map[string]uint64),
		refused:  make(map[string]string),
	}
}

// run is the term's goroutine.
func (l *leader) run() {
	defer close(l.done)
	l.mu.Lock()
	l.wg.Add(1)
	l.mu.Unlock()
	go func() {
		defer l.wg.Done()
		l.watchUpstream()
	}()
	up := l.dial()
	if up == nil {
		close(l.dropped)
		l.wg.Wait()
		return
	}
	l.mu.Lock()
	l.up = up
	l.wg.Add(2)
	l.mu.Unlock()
	go func() {
		defer l.wg.Done()
		l.lvc.run(l.ctx)
	}()
	go func() {
		defer l.wg.Done()
		l.followWants()
	}()
	calls, err := l.env.nc.Subscribe(l.env.subj.rpc, l.onCall)
	if err != nil {
		l.env.log.Error("natsbridge: cannot serve calls", zap.Error(err))
	}

	<-l.ctx.Done()
	// Stepping down: the upstream goes first, before anything that may
	// wait on NATS, so that it is gone well before the lease can expire.
	l.mu.Lock()
	l.closing = true
	l.mu.Unlock()
	_ = up.Close()
	close(l.dropped)
	if calls != nil {
		_ = calls.Unsubscribe()
	}
	l.wg.Wait()
}

// dial connects to the upstream, retrying with backoff; nil when the term
// ended first.
func (l *leader) dial() client.Holder {
	bo := l.env.newBackoff()
	for {
		up, err := l.env.dial(l.ctx)
		if err == nil {
			l.dialFailed.Store(false)
			l.env.log.Info("natsbridge: upstream connected")
			return up
		}
		if l.ctx.Err() != nil {
			return nil
		}
		l.dialFailed.Store(true)
		wait := bo.NextBackOff()
		l.env.log.Warn("natsbridge: upstream dial failed; retrying", zap.Error(err), zap.Duration("in", wait))
		if !sleep(l.ctx, wait) {
			return nil
		}
	}
}

// setWanted starts or stops following topic upstream. Called by the run
// goroutine only.
func (l *leader) setWanted(topic string, on bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	t := l.topics[topic]
	if t == nil {
		if !on || l.closing {
			return
		}
		t = &leaderTopic{names: l.env.subj.topic(topic), changed: make(chan struct{}, 1)}
		l.topics[topic] = t
		l.wg.Add(1)
		go l.runTopic(t)
	}
	t.wanted = on
	select {
	case t.changed <- struct{}{}:
	default:
	}
}

// republishRefusals tells members that want topics again which of them
// the upstream refused this term, so their new subscriptions end too.
func (l *leader) republishRefusals(topics []string) {
	for _, topic := range topics {
		l.mu.Lock()
		reason, ok := l.refused[topic]
		l.mu.Unlock()
		if ok {
			l.publishRefusal(l.env.subj.topic(topic), reason)
		}
	}
}

// publishRefusal tells the topic's subscribers that the upstream refused it.
func (l *leader) publishRefusal(names topicNames, reason string) {
	h := nats.Header{HeaderEpoch: []string{l.epoch}, HeaderError: []string{reason}}
	if names.hashed {
		h[HeaderTopic] = []string{names.topic}
	}
	if err := l.env.nc.PublishMsg(&nats.Msg{Subject: names.live, Header: h}); err != nil {
		l.env.stats.publishErrors.Add(1)
	}
}
