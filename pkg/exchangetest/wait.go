package exchangetest

import (
	"context"
	"fmt"
	"sync"
)

// changes wakes waiters whenever connections, subscriptions or the record
// change. The zero value is ready to use.
type changes struct {
	mu sync.Mutex
	ch chan struct{} // closed and replaced on every change
}

// notify wakes every current waiter.
func (c *changes) notify() {
	c.mu.Lock()
	if c.ch != nil {
		close(c.ch)
		c.ch = nil
	}
	c.mu.Unlock()
}

// changed returns a channel closed by the next notify.
func (c *changes) changed() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ch == nil {
		c.ch = make(chan struct{})
	}
	return c.ch
}

// wait calls cond until it reports true or ctx ends; cond also describes
// what is awaited for the error.
func (c *changes) wait(ctx context.Context, cond func() (bool, string)) error {
	for {
		ch := c.changed() // before cond, so no change is missed
		ok, what := cond()
		if ok {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("exchangetest: waiting for %s: %w", what, ctx.Err())
		}
	}
}
