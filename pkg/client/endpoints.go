package client

import (
	"net/http"

	"github.com/wsfan/wsfan/internal/endpoints"
	"github.com/wsfan/wsfan/internal/redact"
)

// A client may have several endpoints of one service (WithEndpoints):
// the one given to Dial first, then the others in order of preference.
// When the connection in use fails, the next endpoint is dialled at once,
// and the one after it if that fails, round the list; the backoff wait
// (WithReconnectWait) starts only once every endpoint has failed in a
// row (package endpoints keeps the list and that order).

// WithEndpoints gives more endpoints of the same service, after the URL
// given to Dial, in order of preference: when the connection in use
// fails, the next is dialled at once (see Client.Endpoint). Each takes a
// user:password@ as Dial's URL does. Default: none.
func WithEndpoints(urls ...string) Option {
	return clientOption(func(c *config) { c.endpoints = append(c.endpoints, urls...) })
}

// endpointsOf makes the client's endpoints: url, then more, each as
// dialled (userinfo taken out into its header) and as shown (redacted).
// header is WithHeader's.
func endpointsOf(url string, more []string, header http.Header) []endpoints.Endpoint {
	all := append([]string{url}, more...)
	eps := make([]endpoints.Endpoint, len(all))
	for i, u := range all {
		dialURL, h := basicAuthFromURL(u, header)
		eps[i] = endpoints.Endpoint{URL: dialURL, Header: askGapNotices(h), Shown: redact.URL(u)}
	}
	return eps
}

// Endpoint returns the endpoint the client is connected to, or dialling,
// redacted as logs show it, and its index: 0 for Dial's URL, then
// WithEndpoints' in order. A Standby's leg counts in the Standby's list,
// the one standby.Dial was given, although it prefers its own endpoint.
func (c *Client) Endpoint() (url string, index int) {
	ep, i := c.eps.InUse()
	return ep.Shown, i
}
