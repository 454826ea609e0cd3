package exchangetest

import "strings"

// channelParams are the params of Thalex and Deribit (un)subscribe requests.
type channelParams struct {
	Channels []string `json:"channels"`
}

// subscribeChannels handles a Thalex/Deribit subscribe request on c's
// reader goroutine. The result is the accepted channels; refused channels,
// unknown ones and private ones (privatePrefixes) requested without login
// or through the public method are omitted. The accepted channels are
// registered once the response is written.
func subscribeChannels(c *conn, req *request, private bool, privatePrefixes ...string) (any, *RPCError) {
	var p channelParams
	if !decodeParams(req, &p) {
		return nil, errInvalidParams
	}
	if limit := c.s.cfg.batchCap; limit > 0 && len(p.Channels) > limit {
		return nil, errTooMany
	}
	accepted := make([]string, 0, len(p.Channels))
	for _, ch := range p.Channels {
		if hasAnyPrefix(ch, privatePrefixes) && (!private || !c.loggedIn()) {
			continue
		}
		if !c.s.accepts(ch) {
			continue
		}
		accepted = append(accepted, ch)
	}
	topics := accepted
	c.after = append(c.after, func() {
		for _, t := range topics {
			c.s.addSub(c, t, "")
		}
	})
	return accepted, nil
}

// unsubscribeChannels handles a Thalex/Deribit unsubscribe request on c's
// reader goroutine; the result lists the channels c was subscribed to.
func unsubscribeChannels(c *conn, req *request) (any, *RPCError) {
	var p channelParams
	if !decodeParams(req, &p) {
		return nil, errInvalidParams
	}
	removed := make([]string, 0, len(p.Channels))
	for _, ch := range p.Channels {
		if c.s.removeSub(c, ch) {
			removed = append(removed, ch)
		}
	}
	return removed, nil
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}
