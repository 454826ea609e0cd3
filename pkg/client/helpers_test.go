package client_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/deribit"
	"github.com/wsfan/wsfan/pkg/ethereal"
	"github.com/wsfan/wsfan/pkg/ethereum"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// dialects pairs every test server dialect with the client's.
var dialects = []struct {
	name   string
	server exchangetest.Dialect
	proto  func() protocol.Protocol
	topics []string // topics valid on that dialect
}{
	{"thalex", thalex.Name, func() protocol.Protocol { return thalex.Protocol(thalex.WithNotices(false)) }, []string{"ticker.BTC-PERPETUAL.raw", "book.BTC-PERPETUAL.none.10.100ms", "ticker.ETH-PERPETUAL.raw"}},
	{"deribit", deribit.Name, func() protocol.Protocol { return deribit.Protocol(deribit.WithHeartbeat(0)) }, []string{"ticker.BTC-PERPETUAL.100ms", "trades.BTC-PERPETUAL.100ms", "ticker.ETH-PERPETUAL.100ms"}},
	{"ethereum", ethereum.Name, ethereum.Protocol, []string{"newHeads", "newPendingTransactions", `["logs",{"address":"0x1"}]`}},
	{"ethereal", ethereal.Name, ethereal.Protocol, []string{"L2Book:BTCUSD", "Ticker:BTCUSD", "L2Book:ETHUSD"}},
}

// dial connects a client to srv and closes it with the test.
func dial(t *testing.T, srv *exchangetest.Server, p protocol.Protocol, opts ...client.Option) *client.Client {
	t.Helper()
	opts = append([]client.Option{client.WithProtocol(p)}, opts...)
	c, err := client.Dial(testutil.Context(t), srv.URL(), opts...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// newServer starts a test exchange that is closed with the test.
func newServer(t *testing.T, d exchangetest.Dialect, opts ...exchangetest.Option) *exchangetest.Server {
	t.Helper()
	srv := exchangetest.NewServer(d, opts...)
	t.Cleanup(srv.Close)
	return srv
}

// receive waits for the next message on sub.
func receive(t *testing.T, sub *client.Subscription) client.Message {
	t.Helper()
	select {
	case m, ok := <-sub.C():
		require.True(t, ok, "subscription channel closed")
		return m
	case <-time.After(5 * time.Second):
		t.Fatal("no message within 5s")
		return client.Message{}
	}
}

// waitEvent waits for an event of kind on c.
func waitEvent(t *testing.T, c *client.Client, kind client.EventKind) client.Event {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case ev, ok := <-c.Events():
			require.True(t, ok, "events channel closed while waiting for %v", kind)
			if ev.Kind == kind {
				return ev
			}
		case <-timeout:
			t.Fatalf("no %v event within 10s", kind)
		}
	}
}
