package client

import (
	"net/http"

	"github.com/wsfan/wsfan/internal/redact"
)

// A client may have several endpoints of one service (WithEndpoints):
// the one given to Dial first, then the others in order of preference.
// When the connection in use fails, the next endpoint is dialled at once,
// and the one after it if that fails, round the list; the backoff wait
// (WithReconnectWait) starts only once every endpoint has failed in a
// row, so one endpoint that accepts and drops is not dialled more often
// than the backoff allows.

// endpoint is one URL a client may dial: as dialled (userinfo taken out
// into its header) and as shown (redacted).
type endpoint struct {
	url    string
	header http.Header
	shown  string
}

// WithEndpoints gives more endpoints of the same service, after the URL
// given to Dial, in order of preference: when the connection in use
// fails, the next is dialled at once (see Client.Endpoint). Each takes a
// user:password@ as Dial's URL does. Default: none.
func WithEndpoints(urls ...string) Option {
	return clientOption(func(c *config) { c.endpoints = append(c.endpoints, urls...) })
}

// endpointsOf makes the client's endpoints: url, then more. header is
// WithHeader's.
func endpointsOf(url string, more []string, header http.Header) []endpoint {
	all := append([]string{url}, more...)
	eps := make([]endpoint, len(all))
	for i, u := range all {
		dialURL, h := basicAuthFromURL(u, header)
		eps[i] = endpoint{url: dialURL, header: askGapNotices(h), shown: redact.URL(u)}
	}
	return eps
}

// Endpoint returns the endpoint the client is connected to, or dialling,
// redacted as logs show it, and its index: 0 for Dial's URL, then
// WithEndpoints' in order. A Standby's leg counts in the Standby's list,
// the one standby.Dial was given, although it prefers its own endpoint.
func (c *Client) Endpoint() (url string, index int) {
	eps, i := c.endpointsInUse()
	return eps[i].shown, (i + c.cfg.endpointBase) % len(eps)
}

// endpointsInUse returns the endpoints and the index of the one in use
// or being dialled, read together (SetEndpoints replaces both): for
// goroutines other than the supervisor.
func (c *Client) endpointsInUse() ([]endpoint, int) {
	c.epMu.RLock()
	defer c.epMu.RUnlock()
	return c.eps, int(c.current.Load())
}

// shownIndex is the index of the client's i-th endpoint as Endpoint, its
// events and its ConnInfo count it: a Standby's leg lists the Standby's
// endpoints from its own (AsLeg), and counts in the Standby's list.
func (c *Client) shownIndex(i int) int {
	return (i + c.cfg.endpointBase) % len(c.eps)
}

// onPreferred reports whether the client is on (or dialling) its first
// endpoint: a leg's own.
func (c *Client) onPreferred() bool { return c.current.Load() == 0 }

// endpointFor returns the index of the endpoint the attempt-th attempt
// (from 1) after a failure of endpoint failed dials, and whether the
// backoff wait goes before it: round the list from the next one, the wait
// only once every endpoint has failed in a row.
func (c *Client) endpointFor(failed, attempt int) (index int, wait bool) {
	n := len(c.eps)
	return (failed + attempt) % n, attempt%n == 0
}
