package client_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/clock"
	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/deribit"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// TestStampsDirect: a venue stamping every message 50 ms before the
// client reads it (by a fake clock) is observed at exactly 50 ms; without
// WithStamps the times stay zero.
func TestStampsDirect(t *testing.T) {
	clk := clock.NewFake(time.UnixMilli(1737043200123))
	srv := newServer(t, deribit.Name)
	for _, stamped := range []bool{true, false} {
		opts := []client.Option{client.WithReadClock(clk.Now)}
		if stamped {
			opts = append(opts, client.WithStamps())
		}
		c := dial(t, srv, deribit.Protocol(deribit.WithHeartbeat(0)), opts...)
		sub, err := c.Subscribe(testutil.Context(t), []string{"ticker.BTC-PERPETUAL.100ms"})
		require.NoError(t, err)
		for i := range 3 {
			venue := clk.Now().Add(-50 * time.Millisecond)
			srv.Publish("ticker.BTC-PERPETUAL.100ms", fmt.Appendf(nil, `{"timestamp":%d,"i":%d}`, venue.UnixMilli(), i))
			m := receive(t, sub)
			if !stamped {
				require.True(t, m.ExchangeTime.IsZero() && m.UpstreamRecvTime.IsZero(), "times without WithStamps: %v", m)
				continue
			}
			require.Equal(t, 50*time.Millisecond, m.RecvTime.Sub(m.ExchangeTime))
			require.True(t, m.UpstreamRecvTime.IsZero())
			clk.Advance(time.Second)
		}
		require.NoError(t, c.Close())
	}
}

// TestStampsBehindSidecar: a frame carrying a sidecar's stamps reaches
// the program as the venue sent it, with the sidecar's venue stamp and
// receive time.
func TestStampsBehindSidecar(t *testing.T) {
	srv := newServer(t, deribit.Name)
	c := dial(t, srv, deribit.Protocol(deribit.WithHeartbeat(0)), client.WithStamps())
	sub, err := c.Subscribe(testutil.Context(t), []string{"ticker.BTC-PERPETUAL.100ms"})
	require.NoError(t, err)
	frame := []byte(`{"jsonrpc":"2.0","method":"subscription","params":{"channel":"ticker.BTC-PERPETUAL.100ms","data":{"timestamp":1,"p":2}}}`)
	s := protocol.Stamps{Venue: 1737043200123000000, Recv: 1737043200173000000, Send: 1737043200174000000}
	srv.PublishRaw(protocol.AppendStamps(nil, frame, s))
	m := receive(t, sub)
	require.JSONEq(t, `{"timestamp":1,"p":2}`, string(m.Data))
	require.Equal(t, time.Unix(0, s.Venue), m.ExchangeTime, "the sidecar's venue stamp, not read again")
	require.Equal(t, time.Unix(0, s.Recv), m.UpstreamRecvTime)
}
