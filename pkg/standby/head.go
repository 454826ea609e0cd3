package client

import "time"

// Which leg of a Standby takes calls on a chain (Ethereum): the node
// with the highest head leads, and a node more than WithHeadLag blocks
// behind it takes none, so a call never reads a state the others have
// left behind. Each leg's head is the highest it delivered on a chain
// topic (newHeads); with none subscribed, every leg is level.

// DefaultHeadLag is how many blocks a Standby's leg may be behind the
// highest head and still take calls (WithHeadLag).
const DefaultHeadLag = 2

// WithHeadLag sets how many blocks a Standby's leg may be behind the
// leg with the highest head and still take calls: one further behind
// takes none until it catches up. It applies to dialects whose heads
// form a chain (protocol.Chaining: Ethereum); the legs' heads are read
// from a newHeads subscription, which the program holds. Default:
// DefaultHeadLag (2).
func WithHeadLag(blocks int) Option {
	return clientOption(func(c *config) { c.headLag = max(blocks, 0) })
}

// head is the highest head the client delivered on a chain topic, 0
// when it holds none.
func (c *Client) head() uint64 {
	if c.chaining == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var top uint64
	for _, ts := range c.topics.all() {
		if ts.topic.Backfill && !ts.topic.Retracts {
			top = max(top, ts.lastPos.Load())
		}
	}
	return top
}

// caller picks the leg a call goes to, among those not tried: the
// connected leg with the highest head, none more than the lag allowed
// behind the highest connected one, and one whose pongs are late
// (Client.late: the link may be dying) only when no other can take it;
// else the first not tried that is not connected (whose call fails at
// once, naming why); -1 when none is left.
func (sb *Standby) caller(tried []bool) int {
	heads := make([]uint64, len(sb.legs))
	late := make([]bool, len(sb.legs))
	now := time.Now()
	var top uint64
	for i, c := range sb.legs {
		if c.State() == StateConnected {
			heads[i] = c.head()
			top = max(top, heads[i])
			late[i] = c.late(now)
		}
	}
	best, fallback := -1, -1
	for i, c := range sb.legs {
		if tried[i] {
			continue
		}
		if c.State() != StateConnected {
			if fallback < 0 {
				fallback = i
			}
			continue
		}
		if top > heads[i]+uint64(sb.headLag) {
			continue // behind: it takes no call
		}
		if best < 0 || late[best] && !late[i] || late[best] == late[i] && heads[i] > heads[best] {
			best = i
		}
	}
	if best >= 0 {
		return best
	}
	return fallback
}
