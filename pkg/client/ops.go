package client

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/wsfan/wsfan/internal/pending"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// subscribeOp is one subscribe or unsubscribe request in flight and its
// outcome.
type subscribeOp struct {
	c         *Client
	req       protocol.Request
	states    []*topicState // parallel to req.Topics (subscribes only)
	subscribe bool          // the ack carries routing keys
	group     *opGroup      // the round's ops, counted as they are answered
	call      pending.Call  // registered under req.ID; answers to this op
	// peers are the ops whose requests share this one's batch array
	// (itself included; nil when it went out alone), in pending: when the
	// server refuses the batch as too large, answering one, it answers
	// none of the others, and answer fails them all at once.
	peers   []*subscribeOp
	pending *pending.Table

	// Set by whoever answers the op before it arrives at group: the
	// reader, the connection's failure, the waiter giving up, or the
	// waiter taking its silence for acceptance (acceptUnanswered).
	keys []string // routing keys from the ack, "" for a refused topic; valid when err is nil
	err  error    // the request failed, was refused as a whole, or its ack was unreadable

	// For a dialect that answers topic by topic (protocol.Venue.TopicAcks),
	// written by the reader under the pending table's lock (part):
	// answered marks the topics answered, parallel to req.Topics; left
	// counts the others; refusals holds each refused topic's reason.
	answered []bool
	left     int
	refusals []*RPCError
	unnamed  []*RPCError // refusals that named no topic: one topic each, not known which
}

// opGroup counts the unanswered ops of one round; done closes when the
// last one is answered.
type opGroup struct {
	left atomic.Int32
	done chan struct{}
}

func (g *opGroup) arrive() {
	if g.left.Add(-1) == 0 {
		close(g.done)
	}
}

// opRound is the working memory of one round of subscribe or unsubscribe
// requests: the topics, the encoded batch, the ops and their ack keys.
// Its storage may be reused only when nothing can touch the last round
// any more: no writer goroutine can still be writing its frames and no
// pending table holds its ops. That holds once its connection has failed
// and conn.wait returned, which is how the supervisor reuses one round for
// every restore, so a restore of 100 topics allocates next to nothing
// (BenchmarkResubscribe). Other rounds are used once.
type opRound struct {
	states  []*topicState
	topics  []*protocol.Topic
	keys    []string // routing keys of the topics, for an unsubscribe
	batch   protocol.Batch
	ops     []subscribeOp
	ptrs    []*subscribeOp
	ackKeys []string // storage for every op's keys
	// prepaid counts the requests whose credits the caller took already
	// (Subscribe's waitSubscribe).
	prepaid int
	// encoded: batch holds the requests of the states send gets already
	// (a paced restore encoded them to count its requests).
	encoded bool
	// The acknowledged requests' ids and pending entries, registered
	// in the connection's pending table together.
	ids   []uint64
	calls []*pending.Call
}

// send encodes the round's requests for states, registers their ids and
// queues the frames to go out in one flush. On failure nothing stays
// registered.
func (r *opRound) send(c *Client, cn *conn, states []*topicState, subscribe bool) ([]*subscribeOp, error) {
	if !r.encoded {
		r.encode(c, states, subscribe)
	}
	r.encoded = false
	ops, err := r.track(c, cn, states, subscribe)
	if err != nil {
		return nil, err
	}
	if err := cn.sendAll(r.batch.Messages); err != nil {
		r.forget(cn)
		return nil, err
	}
	c.cfg.pace.ChargeBatch(&r.batch, subscribe, r.prepaid)
	return ops, nil
}

// encode fills the round for states and encodes their subscribe (or
// unsubscribe) requests from the cached payloads, reusing r's storage.
func (r *opRound) encode(c *Client, states []*topicState, subscribe bool) {
	r.topics = r.topics[:0]
	r.keys = r.keys[:0]
	for _, ts := range states {
		r.topics = append(r.topics, ts.topic)
		r.keys = append(r.keys, ts.key)
	}
	r.batch.Reset()
	chunk := c.cfg.resubscribeChunk
	if learned := int(c.batchLimit.Load()); learned > 0 && (chunk <= 0 || learned < chunk) {
		chunk = learned
	}
	if subscribe {
		c.proto.Subscribe(&r.batch, r.topics, c.nextID, chunk)
	} else {
		c.proto.Unsubscribe(&r.batch, r.topics, r.keys, c.nextID, chunk)
	}
}

// track makes one op per encoded request and registers them in cn's
// pending table, all at once.
func (r *opRound) track(c *Client, cn *conn, states []*topicState, subscribe bool) ([]*subscribeOp, error) {
	reqs := r.batch.Requests
	r.ops = grow(r.ops, len(reqs))
	r.ptrs = grow(r.ptrs, len(reqs))
	keys := 0
	for _, req := range reqs {
		keys += len(req.Topics)
	}
	r.ackKeys = grow(r.ackKeys, keys)
	clear(r.ackKeys)

	var group *opGroup
	r.ids, r.calls = r.ids[:0], r.calls[:0]
	find := stateFinder{all: states}
	used := 0
	for i, req := range reqs {
		op := &r.ops[i]
		*op = subscribeOp{c: c, req: req, subscribe: subscribe}
		op.keys = r.ackKeys[used : used+len(req.Topics) : used+len(req.Topics)]
		used += len(req.Topics)
		if subscribe {
			op.states = find.states(req.Topics)
		}
		r.ptrs[i] = op
		if group == nil {
			group = &opGroup{done: make(chan struct{})}
		}
		op.group = group
		op.pending = cn.pending
		if c.venue.TopicAcks != nil {
			op.answered, op.left = make([]bool, len(req.Topics)), len(req.Topics)
			op.refusals = make([]*RPCError, len(req.Topics))
		}
		op.call = pending.Call{To: op}
		r.ids = append(r.ids, req.ID)
		r.calls = append(r.calls, &op.call)
	}
	if group == nil {
		return r.ptrs, nil
	}
	r.linkBatches()
	group.left.Store(int32(len(r.ids)))
	if err := cn.pending.AddAll(r.ids, r.calls); err != nil {
		return nil, err
	}
	return r.ptrs, nil
}

// linkBatches gives the ops whose requests share a batch array their
// peers.
func (r *opRound) linkBatches() {
	for start := 0; start < len(r.ptrs); {
		end := start + 1
		for end < len(r.ptrs) && r.ptrs[end].req.Message == r.ptrs[start].req.Message {
			end++
		}
		if peers := r.ptrs[start:end:end]; len(peers) > 1 {
			for _, op := range peers {
				op.peers = peers
			}
		}
		start = end
	}
}

// forget unregisters the round's requests, which will not be sent.
func (r *opRound) forget(cn *conn) { cn.pending.RemoveAll(r.ids) }

// release drops the round's references to topics and ops, keeping its
// storage, so a reused round does not keep unsubscribed topics alive
// between restores. Call it once every op is answered.
func (r *opRound) release() {
	clear(r.states)
	clear(r.topics)
	clear(r.ops)
	clear(r.ptrs)
	clear(r.calls)
	r.batch.Reset()
}

// grow returns s with length n, reusing its storage when it is big
// enough.
func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// Answer records the outcome of op (the pending.Answerer of its
// request) and counts it in its group. The server's response comes on
// the reader goroutine, so that a server-assigned routing key (an
// Ethereum subscription id) is routable before the next frame is read;
// an error comes from the connection's failure or from a waiter giving
// up.
func (op *subscribeOp) Answer(f *protocol.Frame, err error) {
	c := op.c
	switch {
	case err != nil:
		op.err = err
	case op.answered != nil && op.left == 0:
		op.settleParts() // every topic answered by a frame of its own
	case f.Error != nil:
		c.stats.rpcErrors.Add(1)
		op.err = parseRPCError(f.Error)
		switch {
		case op.peers != nil && c.batchTooLarge(op.err):
			op.failBatch()
		case c.throttled(op.err):
			op.err = fmt.Errorf("%w: %w", errThrottled, op.err)
		}
	case op.subscribe:
		if err := c.proto.Ack(&op.req, f.Result, op.keys); err != nil {
			op.err = err
			break
		}
		for j, k := range op.keys {
			switch {
			case k == "" || op.req.Topics[j].Key != "":
			case c.handover.Load() == nil:
				c.topics.routeServerKey(k, op.states[j])
			case !c.topics.routeServerKeyBeside(k, op.states[j]):
				op.err = fmt.Errorf("%w: %s", errKeyTaken, k)
			}
		}
	}
	op.group.arrive()
}

// errBatchTooLarge marks an op whose batch array the server refused as
// over its cap: its topics go out again in smaller batches
// (retryOversized).
var errBatchTooLarge = errors.New("batch too large")

// errThrottled marks an op the server refused for the pace of requests
// (Deribit 10028, Thalex 4): its topics go out again once the pace allows
// (retryForNow), and are not taken as refused.
var errThrottled = errors.New("throttled")

// throttled reports whether err refuses a request for the pace of
// requests, as the venue tells (protocol.ErrorClass.Throttled).
func (c *Client) throttled(err error) bool {
	var rpcErr *RPCError
	return errors.As(err, &rpcErr) && c.classifyError(rpcErr.Code, rpcErr.Message).Throttled
}

// batchTooLarge reports whether err refuses a batch as over the server's
// cap, as the venue tells (protocol.ErrorClass.BatchTooLarge).
func (c *Client) batchTooLarge(err error) bool {
	var rpcErr *RPCError
	return errors.As(err, &rpcErr) && c.classifyError(rpcErr.Code, rpcErr.Message).BatchTooLarge
}

// failBatch marks op and its peers, which the server will not answer,
// as refused for their batch's size, and learns a smaller batch (half of
// this one) for every later request. It runs on the reader goroutine.
func (op *subscribeOp) failBatch() {
	c := op.c
	c.learnBatchLimit(len(op.peers) / 2)
	cause := op.err
	op.err = fmt.Errorf("%w: %w", errBatchTooLarge, cause)
	for _, peer := range op.peers {
		if peer != op && op.pending.Remove(peer.req.ID) {
			peer.Answer(nil, op.err)
		}
	}
}

// awaitOps waits until every op is answered, or ctx ends: then the ops
// nobody has taken yet fail with ctx's error, and those the reader took
// are waited for (their answer is on its way). With a dialect whose
// servers may answer only refusals (protocol.Venue.AcceptAfter), the ops
// still unanswered after its AcceptAfter are taken as accepted, unless
// the connection has answered a success meanwhile.
func (c *Client) awaitOps(ctx context.Context, cn *conn, ops []*subscribeOp) {
	var quiet <-chan time.Time
	if after := c.venue.AcceptAfter; after > 0 && c.answers.Load() != answersAll {
		t := time.NewTimer(after)
		defer t.Stop()
		quiet = t.C
	}
	for _, op := range ops {
	wait:
		for {
			select {
			case <-op.group.done:
				break wait
			case <-quiet:
				quiet = nil
				if c.answers.Load() != answersAll {
					c.acceptUnanswered(cn, ops)
				}
				continue
			case <-ctx.Done():
			}
			// Giving up on a request of a server that answers without ids,
			// in order, leaves its place to its late answer, unless the
			// server was seen to answer only refusals.
			owed := c.venue.AcceptAfter > 0 && c.answers.Load() != answersRefusalsOnly
			for _, op := range ops {
				if (owed && cn.pending.Abandon(op.req.ID)) || (!owed && cn.pending.Remove(op.req.ID)) {
					what := "unsubscribe"
					if op.subscribe {
						what = "subscribe"
					}
					op.Answer(nil, ctxError(ctx, what))
				}
			}
			for _, op := range ops {
				<-op.group.done
			}
			return
		}
	}
}

// acceptUnanswered takes the ops nobody has answered as accepted: the
// server answers only refusals (protocol.Venue.AcceptAfter), which the
// client remembers (Client.answers). Logged once a client.
func (c *Client) acceptUnanswered(cn *conn, ops []*subscribeOp) {
	accepted := protocol.Frame{Kind: protocol.KindResponse, Result: []byte("true")}
	n := 0
	for _, op := range ops {
		if cn.pending.Remove(op.req.ID) {
			op.Answer(&accepted, nil)
			n++
		}
	}
	if n > 0 && c.answers.CompareAndSwap(answersUnknown, answersRefusalsOnly) {
		cn.pending.DropOwed() // their answers will not come
		c.log.Info("the server did not answer subscription requests; taken as accepted, as it answers only refusals (logged once)",
			zap.Int("requests", n))
	}
}

// learnBatchLimit lowers the batch size every later request uses to n (at
// least 1): the server refused a batch of twice that.
func (c *Client) learnBatchLimit(n int) {
	n = max(n, 1)
	for {
		cur := c.batchLimit.Load()
		if cur > 0 && int(cur) <= n {
			return
		}
		if c.batchLimit.CompareAndSwap(cur, int32(n)) {
			c.log.Warn("the server refused a batch as too large; sending smaller ones", zap.Int("batch", n))
			return
		}
	}
}

// retryForNow sends again the topics of the ops the server refused for
// now, not for good: those of a batch too large, at once in the smaller
// batches learned since (each refusal halves the size, and a request
// alone is no batch), and those refused for the pace of requests, after a
// wait that doubles from 100ms to 5s. It returns the ops to settle: the
// others and the retries'. When ctx ends the ops refused for now settle
// as refused; when a retry cannot be sent, with the connection's failure.
func (c *Client) retryForNow(ctx context.Context, cn *conn, ops []*subscribeOp) []*subscribeOp {
	wait := 100 * time.Millisecond
	for {
		var again []*topicState
		throttled := false
		kept := ops[:0:0]
		for _, op := range ops {
			switch {
			case errors.Is(op.err, errThrottled):
				throttled = true
				fallthrough
			case errors.Is(op.err, errBatchTooLarge):
				again = append(again, op.states...)
			default:
				kept = append(kept, op)
			}
		}
		if len(again) == 0 {
			return ops
		}
		if throttled {
			c.log.Info("subscribes refused for the pace of requests; sending them again", zap.Int("topics", len(again)), zap.Duration("in", wait))
			select {
			case <-time.After(wait):
			case <-ctx.Done():
				return ops
			}
			wait = min(2*wait, 5*time.Second)
		}
		c.mu.Lock()
		more, err := c.sendSubscribeLocked(cn, again, new(opRound))
		c.mu.Unlock()
		if err != nil {
			// The connection is gone (Deribit ends the session with its
			// 10028): the refusal was for now, so what settles these ops
			// is the lost connection, not the server's no.
			for _, op := range ops {
				if errors.Is(op.err, errThrottled) || errors.Is(op.err, errBatchTooLarge) {
					op.err = fmt.Errorf("%w, after the server refused it for now (%v)", err, op.err)
				}
			}
			return ops
		}
		c.awaitOps(ctx, cn, more)
		ops = append(kept, more...)
	}
}
