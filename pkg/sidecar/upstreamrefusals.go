package sidecar

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/wsfan/wsfan/pkg/client"
)

// A topic the upstream refused (an unknown channel, one the account may
// not read) is refused by the sidecar itself for refusedFor after, with
// the upstream's own reason: a program asking for it again and again, or
// many programs asking for it, cost the shared connection one request,
// not one each — the venue's request budget (OKX: 480 subscribes an
// hour) is every program's.

// refusedFor is how long the sidecar remembers an upstream's refusal.
const refusedFor = 30 * time.Second

// maxRemembered bounds the refusals remembered: past it the expired go,
// and if none had, all of them.
const maxRemembered = 4096

// upstreamRefusals remembers the topics the upstream refused. It is safe
// for concurrent use; the zero value is ready.
type upstreamRefusals struct {
	mu   sync.Mutex
	seen map[string]remembered
}

type remembered struct {
	err   error
	until time.Time
}

// note remembers that the upstream refused topic for err, if err is a
// refusal (not a timeout, not a lost connection: those say nothing of
// the topic).
func (u *upstreamRefusals) note(topic string, err error, now time.Time) {
	var re *client.RPCError
	if !errors.Is(err, client.ErrRefused) && !errors.As(err, &re) {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.seen == nil {
		u.seen = make(map[string]remembered)
	}
	if len(u.seen) >= maxRemembered {
		for t, r := range u.seen {
			if now.After(r.until) {
				delete(u.seen, t)
			}
		}
		if len(u.seen) >= maxRemembered {
			clear(u.seen)
		}
	}
	u.seen[topic] = remembered{err: err, until: now.Add(refusedFor)}
}

// refused returns the upstream's refusal of topic if it is remembered.
func (u *upstreamRefusals) refused(topic string, now time.Time) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	r, ok := u.seen[topic]
	if !ok {
		return nil
	}
	if now.After(r.until) {
		delete(u.seen, topic)
		return nil
	}
	return fmt.Errorf("%w (the upstream refused it %v ago; it is not asked again for %v)",
		r.err, now.Sub(r.until.Add(-refusedFor)).Round(time.Millisecond), refusedFor)
}
