package natsbridge

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"

	"github.com/wsfan/wsfan/pkg/client"
)

// errFenced refuses a call that reached a leader whose lease is no longer
// proven (fence): it was not sent upstream, so it is safe to send again.
var errFenced = fmt.Errorf("%w: the leader's lease is no longer proven; not sent", client.ErrConnectionLost)

// onCall is the NATS handler of the leader's call subject: it checks the
// call policy and the fence, and forwards the call upstream on a goroutine of its own,
// up to maxCalls at once, and replies with the result or the error.
func (l *leader) onCall(msg *nats.Msg) {
	method := first(msg.Header, HeaderMethod)
	if method == "" {
		_ = msg.RespondMsg(encodeCallError(errors.New("no " + HeaderMethod + " header")))
		return
	}
	if l.env.policy != nil {
		if err := l.env.policy(method); err != nil {
			_ = msg.RespondMsg(encodeCallError(policyError{err}))
			return
		}
	}
	select {
	case l.inflight <- struct{}{}:
	default:
		_ = msg.RespondMsg(encodeCallError(ErrBusy))
		return
	}
	l.mu.Lock()
	if l.closing {
		l.mu.Unlock()
		<-l.inflight
		_ = msg.RespondMsg(encodeCallError(context.Canceled))
		return
	}
	l.wg.Add(1)
	l.mu.Unlock()
	go func() {
		defer l.wg.Done()
		defer func() { <-l.inflight }()
		l.env.stats.calls.Add(1)
		if !l.fence.valid() {
			l.env.stats.fenced.Add(1)
			_ = msg.RespondMsg(encodeCallError(errFenced))
			return
		}
		ctx, cancel := context.WithTimeout(l.ctx, l.env.reqTimeout)
		defer cancel()
		res, err := l.up.CallRaw(ctx, method, msg.Data)
		if err != nil {
			_ = msg.RespondMsg(encodeCallError(err))
			return
		}
		_ = msg.Respond(res)
	}()
}
