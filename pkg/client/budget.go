package client

import (
	"context"
	"slices"
)

// A venue's subscription budget (protocol.Venue.Limits, WithRateLimit) holds a
// few requests at once: Deribit's, 10 subscribe requests of 250 channels,
// then 3.3 a second, and a request that finds it empty is refused with
// 10028, which ends the session. So a subscribe or a restore needing more
// requests than the budget holds goes out in rounds: the first at once,
// each next one once its credits are there. Within the budget (the common
// case) it is one round, one write, as without a budget.

// fitBudget keeps of states the topics of the first requests the
// subscription budget holds at once, as the dialect chunks them
// (encoding them alone gives those same requests), and returns how many
// requests they make and whether some were left. When all fit, r holds
// their encoded batch. Called with c.mu held.
func (c *Client) fitBudget(r *opRound, states []*topicState) (kept []*topicState, requests int, more bool) {
	r.encode(c, states, true)
	reqs := r.batch.Requests
	most := c.cfg.pace.RoundRequests()
	if len(reqs) <= most {
		r.encoded = true // send need not encode them again
		return states, max(len(reqs), len(r.batch.Messages)), false
	}
	fit := 0
	for _, req := range reqs[:most] {
		fit += len(req.Topics)
	}
	return states[:fit], most, true
}

// awaitRoundLocked takes the credits of a round of requests, of which
// prepaid are taken already, waiting for them without c.mu, and returns
// the round's topics less those removed meanwhile (r then encodes them
// again). Called with c.mu held; returns with it held.
func (c *Client) awaitRoundLocked(ctx context.Context, r *opRound, round []*topicState, requests, prepaid int) ([]*topicState, error) {
	r.prepaid = max(requests, prepaid)
	if requests <= prepaid {
		return round, nil
	}
	c.mu.Unlock()
	err := paceErr(ctx, c.cfg.pace.WaitSubscribes(ctx, c.ctx, requests-prepaid))
	c.mu.Lock()
	if err != nil {
		return nil, err
	}
	kept := slices.DeleteFunc(slices.Clone(round), func(ts *topicState) bool { return ts.removed })
	if len(kept) != len(round) {
		r.encoded = false
	}
	return kept, nil
}

// sendSubscribeRoundsLocked sends the subscribe requests of fresh, in
// rounds the subscription budget holds (see above); the caller took the
// first request's credits (waitSubscribe). An error sending the first
// round is returned; after it, a round that cannot go out (ctx ended
// while it waited, the connection failed) fails its topics and the rest
// (ts.err), and the ops sent so far are returned. Called with c.mu held;
// returns with it held, but lets it go while a round waits.
func (c *Client) sendSubscribeRoundsLocked(ctx context.Context, cn *conn, fresh []*topicState) ([]*subscribeOp, error) {
	if c.cfg.pace.RoundRequests() == 0 {
		return c.sendSubscribeLocked(cn, fresh, &opRound{prepaid: 1})
	}
	var ops []*subscribeOp
	prepaid := 1
	for len(fresh) > 0 {
		r := new(opRound)
		round, requests, _ := c.fitBudget(r, fresh)
		fresh = fresh[len(round):]
		sent, err := c.awaitRoundLocked(ctx, r, round, requests, prepaid)
		var more []*subscribeOp
		if err == nil && len(sent) > 0 {
			more, err = c.sendSubscribeLocked(cn, sent, r)
		}
		if err != nil {
			if ops == nil {
				return nil, err
			}
			for _, ts := range append(round, fresh...) {
				if ts.err == nil {
					ts.err = err
				}
			}
			return ops, nil
		}
		ops = append(ops, more...)
		prepaid = 0
	}
	return ops, nil
}
