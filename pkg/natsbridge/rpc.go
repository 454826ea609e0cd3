package natsbridge

import (
	"context"
	"errors"

	"github.com/nats-io/nats.go"
)

// onCall is the NATS handler of the leader's call subject: it checks the
// call policy and forwards the call upstream on a goroutine of its own,
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
