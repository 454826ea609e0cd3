package sidecar

import "context"

// opsQueue is how many subscription requests may wait for the session's
// subscription goroutine before the reader waits too.
const opsQueue = 64

// queueOp hands op (a subscription request, or a batch array) to the
// session's subscription goroutine: it runs the ops one after the other,
// in the order the client sent them, so a subscribe and the unsubscribe
// after it keep their order, while the reader goes on answering pings,
// heartbeats and calls. The goroutine runs only while ops wait (an idle
// client costs no goroutine for it) and owns the session's topics
// (session.subscribe, attach, unsubscribe) while it runs; the reader
// hands it the next op only through the queue. Called by the reader
// only; it blocks while opsQueue ops wait.
func (c *wsConn) queueOp(op func()) {
	if c.ops == nil {
		c.ops = make(chan func(), opsQueue)
		c.opsCtx, c.cancelOps = context.WithCancel(c.cfg.ctx)
	}
	c.ops <- op
	c.opsMu.Lock()
	if !c.opsRunning {
		c.opsRunning = true
		c.opsWG.Add(1)
		go c.runOps()
	}
	c.opsMu.Unlock()
}

// runOps is the subscription goroutine: it runs the queued ops and ends
// when none is left.
func (c *wsConn) runOps() {
	defer c.opsWG.Done()
	for {
		select {
		case op := <-c.ops:
			op()
			continue
		default:
		}
		c.opsMu.Lock()
		if len(c.ops) == 0 { // an op queued from now on starts a new goroutine
			c.opsRunning = false
			c.opsMu.Unlock()
			return
		}
		c.opsMu.Unlock()
	}
}

// stopOps ends the subscription goroutine once the reader has ended: a
// subscribe still waiting for the upstream gives up, and it returns when
// the ops queued have run. Called by the reader only.
func (c *wsConn) stopOps() {
	if c.ops == nil {
		return
	}
	c.cancelOps()
	c.opsWG.Wait()
}
