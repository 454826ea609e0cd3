package natsbridge

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"
)

// lvcValue is the newest message of a topic not yet stored in the
// last-value stream, or a request to clear the topic's last value. Its
// flags are not stored: a last value is where a new subscriber starts,
// there is nothing before it to have missed.
type lvcValue struct {
	topic topicNames
	seq   uint64
	data  []byte
	purge bool
}

// lvcWriter stores each topic's last message in the last-value stream,
// off the live path: publishers only replace the topic's pending value
// (never waiting on JetStream), and the writer goroutine stores what is
// pending in rounds, waiting for every acknowledgement of a round before
// the next, so a busy topic costs one write per round and writes of one
// topic never overtake each other. A failed write is retried unless a
// newer value replaced it.
type lvcWriter struct {
	env    leaderEnv
	epoch  string
	kick   chan struct{}       // capacity 1: something is pending
	js     jetstream.JetStream // the member's async publisher
	stream jetstream.Stream

	// mu protects pending.
	mu      sync.Mutex
	pending map[string]lvcValue // by last-value subject
}

// lvcAckWait bounds the wait for one round's acknowledgements.
const lvcAckWait = 5 * time.Second

func newLVCWriter(env leaderEnv, epoch string) *lvcWriter {
	return &lvcWriter{
		env:     env,
		epoch:   epoch,
		kick:    make(chan struct{}, 1),
		js:      env.lvcJS,
		stream:  env.lvc,
		pending: make(map[string]lvcValue),
	}
}

// put makes v the topic's pending value. Called by the topic's goroutine.
func (w *lvcWriter) put(subject string, v lvcValue) {
	w.mu.Lock()
	w.pending[subject] = v
	w.mu.Unlock()
	w.wake()
}

// purge clears the topic's last value after its pending writes.
func (w *lvcWriter) purge(subject string) { w.put(subject, lvcValue{purge: true}) }

// run is the writer goroutine; it ends with ctx.
func (w *lvcWriter) run(ctx context.Context) {
	bo := w.env.newBackoff()
	ensure := true // the stream may be gone since the member joined
	for {
		select {
		case <-w.kick:
		case <-ctx.Done():
			return
		}
		if ensure {
			ectx, cancel := context.WithTimeout(ctx, lvcAckWait)
			err := w.env.ensureLVC(ectx)
			cancel()
			if err != nil {
				w.env.log.Warn("natsbridge: last-value stream unavailable", zap.Error(err))
				w.wake()
				if !sleep(ctx, bo.NextBackOff()) {
					return
				}
				continue
			}
			ensure = false
		}
		w.mu.Lock()
		batch := w.pending
		w.pending = make(map[string]lvcValue, len(batch))
		w.mu.Unlock()
		if failed := w.write(ctx, batch); failed > 0 {
			ensure = true
			if !sleep(ctx, bo.NextBackOff()) {
				return
			}
		} else {
			bo.Reset()
		}
	}
}

// wake makes the writer goroutine look at the pending values.
func (w *lvcWriter) wake() {
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// write stores one round and returns how many writes failed; those are
// pending again unless a newer value came meanwhile.
func (w *lvcWriter) write(ctx context.Context, batch map[string]lvcValue) int {
	type inflight struct {
		subject string
		v       lvcValue
		f       jetstream.PubAckFuture
	}
	sent := make([]inflight, 0, len(batch))
	var failed []inflight
	for subject, v := range batch {
		if v.purge {
			pctx, cancel := context.WithTimeout(ctx, lvcAckWait)
			err := w.stream.Purge(pctx, jetstream.WithPurgeSubject(subject))
			cancel()
			if err != nil {
				failed = append(failed, inflight{subject: subject, v: v})
			}
			continue
		}
		f, err := w.js.PublishMsgAsync(w.message(subject, v))
		if err != nil {
			failed = append(failed, inflight{subject: subject, v: v})
			continue
		}
		sent = append(sent, inflight{subject, v, f})
	}
	for _, s := range sent {
		select {
		case <-s.f.Ok():
			w.env.stats.lastValues.Add(1)
		case err := <-s.f.Err():
			w.env.log.Debug("natsbridge: last value not stored; retrying", zap.String("subject", s.subject), zap.Error(err))
			failed = append(failed, s)
		case <-ctx.Done():
			return 0
		}
	}
	if len(failed) == 0 {
		return 0
	}
	w.env.stats.lastValueErrs.Add(uint64(len(failed)))
	w.mu.Lock()
	for _, s := range failed {
		if _, newer := w.pending[s.subject]; !newer {
			w.pending[s.subject] = s.v
		}
	}
	w.mu.Unlock()
	w.wake()
	return len(failed)
}

// message is the stored form of a last value: the live message's headers
// and payload, on the topic's last-value subject.
func (w *lvcWriter) message(subject string, v lvcValue) *nats.Msg {
	h := nats.Header{
		HeaderEpoch: []string{w.epoch},
		HeaderSeq:   []string{strconv.FormatUint(v.seq, 10)},
	}
	if v.topic.hashed {
		h[HeaderTopic] = []string{v.topic.topic}
	}
	return &nats.Msg{Subject: subject, Header: h, Data: v.data}
}
