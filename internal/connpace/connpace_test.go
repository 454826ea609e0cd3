package connpace

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/clock"
)

// A connection waits for the credits of the ones before it on the same
// host, and takes them only when it goes: a host's pace is not another
// host's, and a waiter whose context ends leaves with its error.
func TestWaitPacesEachHost(t *testing.T) {
	fake := clock.NewFake(time.Unix(1_700_000_000, 0))
	p := newPacer(fake)
	l := Limit{Rate: 2, Burst: 1, Cost: 1}
	ctx := context.Background()
	require.NoError(t, p.wait(ctx, "ws.okx.com:8443", l), "the first goes at once")
	require.NoError(t, p.wait(ctx, "WSPAP.okx.com:8443", l), "another host has its own bucket")

	done := make(chan error, 1)
	go func() { done <- p.wait(ctx, "WS.OKX.COM:8443", l) }()
	require.NoError(t, fake.WaitTimers(ctx, 1))
	select {
	case err := <-done:
		t.Fatalf("the second connection to a host went before its credit: %v", err)
	default:
	}
	fake.Advance(500 * time.Millisecond)
	require.NoError(t, <-done)

	cancelled, cancel := context.WithCancel(ctx)
	go func() { done <- p.wait(cancelled, "ws.okx.com:8443", l) }()
	require.NoError(t, fake.WaitTimers(ctx, 1))
	cancel()
	assert.ErrorIs(t, <-done, context.Canceled)
	fake.Advance(500 * time.Millisecond)
	assert.Zero(t, p.take(key{host: "ws.okx.com:8443", l: l}), "a waiter that left took nothing")
}

// A limit that is not positive never waits.
func TestWaitWithoutLimit(t *testing.T) {
	p := newPacer(clock.NewFake(time.Unix(0, 0)))
	for range 3 {
		assert.NoError(t, p.wait(context.Background(), "h", Limit{}))
	}
}
