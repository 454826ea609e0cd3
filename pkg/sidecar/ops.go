package sidecar

import "context"

// opsQueue is how many subscription requests may wait for the session's
// subscription goroutine before the reader waits too.
const opsQueue = 64

// queueOp hands op (a subscription request, or a batch array) to the
// session's subscription goroutine, starting it on first use: it runs the
// ops one after the other, in the order the client sent them, so a
// subscribe and the unsubscribe after it keep their order, while the
// reader goes on answering pings, heartbeats and calls. It owns the
// session's topics (session.subscribe, attach, unsubscribe) until the
// reader ends and stopOps returns. Called by the reader only; it blocks
// while opsQueue ops wait.
func (c *wsConn) queueOp(op func()) {
	if c.ops == nil {
		c.ops = make(chan func(), opsQueue)
		c.opsDone = make(chan struct{})
		c.opsCtx, c.cancelOps = context.WithCancel(c.cfg.ctx)
		go c.runOps()
	}
	c.ops <- op
}

// runOps is the subscription goroutine.
func (c *wsConn) runOps() {
	defer close(c.opsDone)
	for op := range c.ops {
		op()
	}
}

// stopOps ends the subscription goroutine once the reader has ended: a
// subscribe still waiting for the upstream gives up, the ops still queued
// run (and find the context ended), and it returns when the goroutine
// has. Called by the reader only.
func (c *wsConn) stopOps() {
	if c.ops == nil {
		return
	}
	c.cancelOps()
	close(c.ops)
	<-c.opsDone
}
