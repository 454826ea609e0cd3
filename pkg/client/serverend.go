package client

import "go.uber.org/zap"

// endedByServer ends, off the reader goroutine (which never takes c.mu),
// every subscription holding a topic of group, which the server ended on
// its own (frame, a protocol.KindEnded): each with a *RefusedError naming
// its ended topics and the server's frame, rather than a silence nobody
// explains.
func (c *Client) endedByServer(group string, frame []byte) {
	if group == "" {
		return
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		c.mu.Lock()
		ended := make(map[*Subscription][]string)
		for s := range c.subs {
			for _, ts := range s.states {
				if ts.topic.Group == group {
					ended[s] = append(ended[s], ts.name)
				}
			}
		}
		c.mu.Unlock()
		cause := &RPCError{Message: "ended by the server: " + truncate(frame, 200)}
		for s, topics := range ended {
			c.log.Warn("the server ended a subscription", zap.Strings("topics", topics), zap.ByteString("frame", frame[:min(len(frame), 200)]))
			_ = c.unsubscribe(c.ctx, s, &RefusedError{Topics: topics, Cause: cause})
		}
	}()
}
