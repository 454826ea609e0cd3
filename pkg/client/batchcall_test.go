package client_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/deribit"
	"github.com/wsfan/wsfan/pkg/ethereum"
	"github.com/wsfan/wsfan/pkg/exchangetest"
)

// A dialect without batch arrays (Deribit) sends each call of a batch as
// a request of its own, in one flush; each element gets its own answer,
// a refused one its error, in order. Ethereum's go out as one array.
func TestBatchCall(t *testing.T) {
	for _, tc := range []struct {
		name   string
		server exchangetest.Dialect
		opts   []client.Option
		method string
		frames int
	}{
		{"deribit", deribit.Name, []client.Option{client.WithProtocol(deribit.Protocol(deribit.WithHeartbeat(0)))}, "public/get_time", 3},
		{"ethereum", ethereum.Name, []client.Option{client.WithProtocol(ethereum.Protocol())}, "eth_chainId", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newServer(t, tc.server)
			c, err := client.Dial(testutil.Context(t), srv.URL(), tc.opts...)
			require.NoError(t, err)
			t.Cleanup(func() { _ = c.Close() })
			var first, last any
			batch := []client.BatchElem{
				{Method: tc.method, Result: &first},
				{Method: "no_such_method"},
				{Method: tc.method, Result: &last},
			}
			srv.ResetReceived()
			require.NoError(t, c.BatchCall(testutil.Context(t), batch))
			assert.NoError(t, batch[0].Error)
			assert.NotNil(t, first)
			var rpcErr *client.RPCError
			require.ErrorAs(t, batch[1].Error, &rpcErr)
			assert.Equal(t, -32601, rpcErr.Code)
			assert.NoError(t, batch[2].Error)
			assert.NotNil(t, last)
			assert.Len(t, srv.Received(), tc.frames, "frames the server read")
		})
	}
}
