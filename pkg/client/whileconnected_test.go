package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// done waits for ctx to end, failing the test after 5s.
func done(t *testing.T, ctx context.Context) {
	t.Helper()
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("context still alive after 5s")
	}
}

// A task started by the on-connect hook lives as long as its connection:
// its context ends when the connection is lost, its calls go to its own
// connection, and the next connection's hook starts a task of its own.
func TestWhileConnectedLastsAsLongAsTheConnection(t *testing.T) {
	srv := newServer(t, thalex.Name)
	srv.Handle("public/time", func(json.RawMessage) (any, *protocol.Error) { return 1, nil })
	tasks := make(chan context.Context, 2)
	hook := func(ctx context.Context, c *client.Client) error {
		return c.WhileConnected(ctx, func(ctx context.Context) error {
			tasks <- ctx
			<-ctx.Done()
			return nil
		})
	}
	c := dial(t, srv, thalex.Protocol(thalex.WithNotices(false)), fastBackoff(), client.WithOnConnect(hook))
	first := <-tasks
	require.NoError(t, c.Call(first, "public/time", nil, nil))

	srv.DropConnections()
	done(t, first)
	require.ErrorIs(t, context.Cause(first), client.ErrConnectionLost)
	second := <-tasks
	waitEvent(t, c, client.Connected)
	assert.ErrorIs(t, c.Call(first, "public/time", nil, nil), client.ErrConnectionLost,
		"a call of the first task never goes to the second connection")
	require.NoError(t, c.Call(second, "public/time", nil, nil))
	var conns []int
	for _, r := range srv.Received() {
		conns = append(conns, r.Conn)
	}
	assert.Equal(t, []int{1, 2}, conns)

	require.NoError(t, c.Close())
	done(t, second)
	assert.ErrorIs(t, context.Cause(second), client.ErrClosed)
	assert.NotErrorIs(t, context.Cause(second), client.ErrConnectionLost)
}

var errTask = errors.New("task failed")

// A task that fails drops its connection, which is replaced as after any
// loss; Close waits for the task to return.
func TestWhileConnectedTaskFailureDropsTheConnection(t *testing.T) {
	srv := newServer(t, thalex.Name)
	fail, windingUp, release := make(chan struct{}), make(chan struct{}), make(chan struct{})
	var connections atomic.Int32
	hook := func(ctx context.Context, c *client.Client) error {
		n := connections.Add(1)
		return c.WhileConnected(ctx, func(ctx context.Context) error {
			if n == 1 {
				<-fail
				return errTask
			}
			<-ctx.Done()
			close(windingUp)
			<-release
			return nil
		})
	}
	c := dial(t, srv, thalex.Protocol(thalex.WithNotices(false)), fastBackoff(), client.WithOnConnect(hook))
	_, err := c.Subscribe(testutil.Context(t), []string{"ticker.BTC-PERPETUAL.raw"})
	require.NoError(t, err)
	drainEvents(c)

	close(fail)
	ev := waitEvent(t, c, client.Disconnected)
	require.ErrorIs(t, ev.Err, errTask)
	ev = waitEvent(t, c, client.Resubscribed)
	assert.Equal(t, 1, ev.Topics)
	assert.Equal(t, int32(2), connections.Load())

	closed := make(chan struct{})
	go func() {
		_ = c.Close()
		close(closed)
	}()
	<-windingUp
	select {
	case <-closed:
		t.Fatal("Close returned while the task was still running")
	default:
	}
	close(release)
	<-closed
	assert.ErrorIs(t, c.WhileConnected(context.Background(), func(context.Context) error { return nil }), client.ErrClosed)
}
