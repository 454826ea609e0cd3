package client

import (
	"time"

	"go.uber.org/zap"
)

// A venue may end the session when a request finds its budget empty
// (Deribit: 10028 too_many_requests "and terminate the session",
// docs.deribit.com/articles/rate-limits). Reconnecting 100 ms later would
// open a session on a budget still empty, and the restore's subscribes
// would end it again. So the reader notes such a refusal, and the
// supervisor's next dial waits until the budget has refilled
// (protocol.ErrorClass.EndsSession) — then restores the topics paced as always.

// noteSessionEnd records an error the venue says ends the session: no
// reconnect before its budget refilled. Runs on the reader goroutine;
// any goroutine may read holdOff.
func (c *Client) noteSessionEnd(e *RPCError) {
	class := c.classifyError(e.Code, e.Message)
	if !class.EndsSession {
		return
	}
	code, refill := e.Code, class.Refill
	until := time.Now().Add(refill).UnixNano()
	if until > c.holdOff.Load() {
		c.holdOff.Store(until)
	}
	c.log.Warn("the server ends the session for this refusal; reconnecting once its budget refilled",
		zap.Int("code", code), zap.Duration("refill", refill))
}

// refillWait is how long the next dial must still wait for a budget a
// refusal emptied (noteSessionEnd); 0 when none did.
func (c *Client) refillWait() time.Duration {
	return max(time.Until(time.Unix(0, c.holdOff.Load())), 0)
}
