package client

import (
	"fmt"
	"net/url"
	"path"

	"github.com/wsfan/wsfan/internal/redact"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// newTopic reads a topic with the dialect and refuses, before anything
// is sent, one this client cannot be served: a topic of another of the
// venue's services than its endpoints' (protocol.Topic.Path), or one
// that needs the venue's login hook on a client without an on-connect
// hook (protocol.Topic.Login). Both wrap protocol.ErrInvalidTopic.
func (c *Client) newTopic(name string) (*protocol.Topic, error) {
	t, err := c.proto.NewTopic(name)
	if err != nil {
		return nil, err
	}
	if t.Login != "" && c.cfg.onConnect == nil {
		return nil, fmt.Errorf("%w: %q needs a logged-in connection: dial with client.WithOnConnect(%s(key))", protocol.ErrInvalidTopic, name, t.Login)
	}
	if t.Path == "" {
		return t, nil
	}
	eps, _ := c.endpointsInUse()
	for _, ep := range eps {
		u, err := url.Parse(ep.url)
		if err != nil || u.Path == t.Path || path.Dir(u.Path) != path.Dir(t.Path) {
			continue // a path of no service of the venue's takes any topic
		}
		u.Path, u.RawPath = t.Path, ""
		return nil, fmt.Errorf("%w: %q is served on %s, not on %s: subscribe it on a client dialled to that URL",
			protocol.ErrInvalidTopic, name, redact.URL(u.String()), ep.shown)
	}
	return t, nil
}
