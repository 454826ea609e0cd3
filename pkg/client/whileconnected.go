package client

import (
	"context"
	"errors"
	"fmt"
)

// WhileConnected runs f on a goroutine of its own for as long as one
// connection lasts: the one ctx belongs to. Call it from the on-connect
// hook with the hook's ctx to keep work going on the connection the hook
// set up, such as refreshing a login token before it expires; elsewhere,
// ctx's connection is the live one.
//
// f's context ends when that connection ends, for whatever reason (lost,
// replaced, the hook or the restore failing, Close). Calls made with it
// go to that connection, never to the one that replaces it, so what f
// does on the server is tied to the connection the server knows it by.
// If f returns an error while the connection is still up, the connection
// is dropped with that error and replaced as after any loss, the
// on-connect hook included. Close waits for f to return. It fails when
// there is no connection.
func (c *Client) WhileConnected(ctx context.Context, f func(ctx context.Context) error) error {
	cn, err := c.activeConn(ctx)
	if err != nil {
		return fmt.Errorf("WhileConnected: %w", err)
	}
	// Not derived from ctx: the hook's context ends when the hook returns.
	life, end := context.WithCancelCause(context.WithValue(context.Background(), connectingKey{}, cn))
	c.wg.Add(2)
	go func() { // ends f's context with the connection
		defer c.wg.Done()
		<-cn.done
		cause := cn.cause
		if !errors.Is(cause, ErrClosed) {
			cause = fmt.Errorf("%w: %w", ErrConnectionLost, cause)
		}
		end(cause)
	}()
	go func() {
		defer c.wg.Done()
		if err := f(life); err != nil && life.Err() == nil {
			cn.fail(fmt.Errorf("connection task: %w", err))
		}
	}()
	return nil
}
