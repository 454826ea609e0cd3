package exchangetest_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/clock"
	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/deribit"
	"github.com/wsfan/wsfan/pkg/ethereum"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/thalex"
)

func TestRateLimitRefusesWithTheDialectsError(t *testing.T) {
	cases := []struct {
		dialect exchangetest.Dialect
		request string
		refused string
	}{
		{thalex.Name, `{"id":%d,"method":"public/test"}`, `{"code":4,"message":"throttle exceeded"}`},
		{deribit.Name, `{"jsonrpc":"2.0","id":%d,"method":"public/test"}`, `{"code":10028,"message":"too_many_requests"}`},
		{ethereum.Name, `{"jsonrpc":"2.0","id":%d,"method":"eth_chainId"}`, `{"code":-32005,"message":"limit exceeded"}`},
	}
	for _, tc := range cases {
		t.Run(tc.dialect.String(), func(t *testing.T) {
			clk := clock.NewFake(t0)
			srv := newServer(t, tc.dialect, exchangetest.WithRateLimit(2, 2), exchangetest.WithClock(clk.Now))
			ws := dial(t, srv)
			errorOf := func(id int) any {
				testutil.Send(t, ws, fmt.Sprintf(tc.request, id))
				return testutil.RecvJSON(t, ws)["error"]
			}
			var refused any
			require.NoError(t, json.Unmarshal([]byte(tc.refused), &refused))
			assert.NotEqual(t, refused, errorOf(1))
			assert.NotEqual(t, refused, errorOf(2))
			assert.Equal(t, refused, errorOf(3), "over the burst")
			if tc.dialect == deribit.Name {
				// Deribit ends the session with the refusal.
				_, _, err := ws.ReadMessage()
				require.Error(t, err, "the connection is closed after 10028")
				ws = dial(t, srv)
				assert.NotEqual(t, refused, errorOf(4), "a new connection has its own budget")
				return
			}
			clk.Advance(500 * time.Millisecond)
			assert.NotEqual(t, refused, errorOf(4), "one request refilled")
			assert.Equal(t, refused, errorOf(5))

			// The limit is per connection.
			other := dial(t, srv)
			testutil.Send(t, other, fmt.Sprintf(tc.request, 1))
			assert.NotEqual(t, refused, testutil.RecvJSON(t, other)["error"])
		})
	}
}

// Every request of a batch array counts.
func TestRateLimitCountsBatchElements(t *testing.T) {
	clk := clock.NewFake(t0)
	srv := newServer(t, ethereum.Name, exchangetest.WithRateLimit(1, 2), exchangetest.WithClock(clk.Now))
	ws := dial(t, srv)
	testutil.Send(t, ws, `[{"jsonrpc":"2.0","id":1,"method":"eth_chainId"},{"jsonrpc":"2.0","id":2,"method":"eth_chainId"},{"jsonrpc":"2.0","id":3,"method":"eth_chainId"}]`)
	require.EqualValues(t, `[{"jsonrpc":"2.0","id":1,"result":"0x1"},`+
		`{"jsonrpc":"2.0","id":2,"result":"0x1"},`+
		`{"jsonrpc":"2.0","id":3,"error":{"code":-32005,"message":"limit exceeded"}}]`, testutil.Recv(t, ws))
}
