package client

import (
	"fmt"
	"maps"
	"net/url"
	"path"
	"sync/atomic"

	"github.com/wsfan/wsfan/internal/redact"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// newTopic reads a topic with the dialect and refuses, before anything
// is sent, one this client cannot be served (checkTopic).
func (c *Client) newTopic(name string) (*protocol.Topic, error) {
	t, err := c.proto.NewTopic(name)
	if err != nil {
		return nil, err
	}
	if err := c.checkTopic(t); err != nil {
		return nil, err
	}
	return t, nil
}

// checkTopic refuses a parsed topic this client cannot be served: a
// topic of another of the venue's services than its endpoints'
// (protocol.Topic.Path), or one that needs the venue's login hook on a
// client without an on-connect hook (protocol.Topic.Login). Both wrap
// protocol.ErrInvalidTopic.
func (c *Client) checkTopic(t *protocol.Topic) error {
	if t.Login != "" && c.cfg.onConnect == nil {
		return fmt.Errorf("%w: %q needs a logged-in connection: dial with client.WithOnConnect(%s(key))", protocol.ErrInvalidTopic, t.Name, t.Login)
	}
	if t.Path == "" {
		return nil
	}
	eps, _ := c.eps.All()
	for _, ep := range eps {
		u, err := url.Parse(ep.URL)
		if err != nil || u.Path == t.Path || path.Dir(u.Path) != path.Dir(t.Path) {
			continue // a path of no service of the venue's takes any topic
		}
		u.Path, u.RawPath = t.Path, ""
		return fmt.Errorf("%w: %q is served on %s, not on %s: subscribe it on a client dialled to that URL",
			protocol.ErrInvalidTopic, t.Name, redact.URL(u.String()), ep.Shown)
	}
	return nil
}

// clashChecked, when a test sets it (export_test.go), is called with each
// topic clashesLocked checks: how a test counts the checks a subscribe
// makes. Nil outside tests.
var clashChecked atomic.Pointer[func(*protocol.Topic)]

// clashesLocked refuses a group of topics (a subscription's) when one of
// them, not held yet, routes its messages by the same key as another
// topic: one held under another name, or one in named (the keys of the
// call's groups accepted so far, with their names; the group's are added
// when it is accepted). The reader gives a key's messages to one topic,
// so the other would hear nothing, and say nothing (OKX routes a push by
// the first of instId, instFamily, instType and ccy its argument names:
// "orders:instType=SPOT,instId=X" and "orders:X" share a key). The error
// is a *RefusedError naming that topic. Called with c.mu held.
func (c *Client) clashesLocked(names []string, parsed []*protocol.Topic, named map[string]string) error {
	var mine map[string]string // the group's own keys
	hook := clashChecked.Load()
	for i, name := range names {
		if hook != nil {
			(*hook)(parsed[i])
		}
		key := parsed[i].Key
		if key == "" || c.topics.get(name) != nil {
			continue
		}
		other, ok := mine[key]
		if !ok {
			other = named[key]
		}
		if ts, held := c.topics.route(key); held {
			other = ts.name
		}
		if other != "" && other != name {
			return &RefusedError{Topics: []string{name}, Cause: fmt.Errorf(
				"%w: %q and %q: their messages carry one routing key (%s), which could reach only one of them;"+
					" subscribe one", protocol.ErrInvalidTopic, name, other, key)}
		}
		if mine == nil {
			mine = make(map[string]string)
		}
		mine[key] = name
	}
	maps.Copy(named, mine)
	return nil
}
