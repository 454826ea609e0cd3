package exchangetest_test

import (
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/deribit"
	"github.com/wsfan/wsfan/pkg/exchangetest"
)

func TestDeribitSubscribePublish(t *testing.T) {
	srv := newServer(t, deribit.Name)
	srv.SetRefused("book.ETH-PERPETUAL.100ms")
	ws := dial(t, srv)

	testutil.Send(t, ws, `{"jsonrpc":"2.0","id":3600,"method":"public/subscribe","params":{"channels":["book.BTC-PERPETUAL.100ms","book.ETH-PERPETUAL.100ms"]}}`)
	ack := testutil.Recv(t, ws)
	re := regexp.MustCompile(`^\{"jsonrpc":"2.0","id":3600,"result":\["book.BTC-PERPETUAL.100ms"\],"usIn":\d+,"usOut":\d+,"usDiff":\d+,"testnet":true\}$`)
	if !re.MatchString(ack) {
		t.Fatalf("ack %s", ack)
	}
	require.EqualValues(t, 1, srv.Subscribers("book.BTC-PERPETUAL.100ms"))
	require.EqualValues(t, 1, srv.Publish("book.BTC-PERPETUAL.100ms", []byte(`{"change_id":2}`)))
	require.EqualValues(t, `{"jsonrpc":"2.0","method":"subscription","params":{"channel":"book.BTC-PERPETUAL.100ms","data":{"change_id":2}}}`, testutil.Recv(t, ws))

	testutil.Send(t, ws, `[{"jsonrpc":"2.0","id":1,"method":"public/test"}]`)
	require.EqualValues(t, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"batch requests are not supported"}}`, testutil.Recv(t, ws))

	testutil.Send(t, ws, `{"jsonrpc":"2.0","id":5,"method":"public/unsubscribe","params":{"channels":["book.BTC-PERPETUAL.100ms"]}}`)
	require.EqualValues(t, "book.BTC-PERPETUAL.100ms", testutil.RecvJSON(t, ws)["result"].([]any)[0].(string))
	require.EqualValues(t, 0, srv.Subscribers("book.BTC-PERPETUAL.100ms"))
}

func TestDeribitAuthGatesUserChannels(t *testing.T) {
	srv := newServer(t, deribit.Name, exchangetest.WithLogin(deribit.NewServerLogin("id", "secret")))
	ws := dial(t, srv)

	testutil.Send(t, ws, `{"jsonrpc":"2.0","id":1,"method":"private/subscribe","params":{"channels":["user.orders.any.any.raw"]}}`)
	require.EqualValues(t, 0, len(testutil.RecvJSON(t, ws)["result"].([]any)))

	testutil.Send(t, ws, `{"jsonrpc":"2.0","id":2,"method":"public/auth","params":{"grant_type":"client_credentials","client_id":"id","client_secret":"bad"}}`)
	require.EqualValues(t, `{"jsonrpc":"2.0","id":2,"error":{"code":13004,"message":"invalid_credentials"}}`, testutil.Recv(t, ws))

	testutil.Send(t, ws, `{"jsonrpc":"2.0","id":3,"method":"public/auth","params":{"grant_type":"client_credentials","client_id":"id","client_secret":"secret"}}`)
	res := testutil.RecvJSON(t, ws)["result"].(map[string]any)
	require.EqualValues(t, "bearer", res["token_type"].(string))
	require.EqualValues(t, 900.0, res["expires_in"].(float64))

	testutil.Send(t, ws, `{"jsonrpc":"2.0","id":4,"method":"private/subscribe","params":{"channels":["user.orders.any.any.raw"]}}`)
	require.EqualValues(t, "user.orders.any.any.raw", testutil.RecvJSON(t, ws)["result"].([]any)[0].(string))
}

func TestDeribitHeartbeat(t *testing.T) {
	srv := newServer(t, deribit.Name)
	ws := dial(t, srv)

	testutil.Send(t, ws, `{"jsonrpc":"2.0","id":5,"method":"public/set_heartbeat","params":{"interval":0.05}}`)
	require.EqualValues(t, "ok", testutil.RecvJSON(t, ws)["result"].(string))
	for i := range 3 {
		require.EqualValues(t, `{"jsonrpc":"2.0","method":"heartbeat","params":{"type":"test_request"}}`, testutil.Recv(t, ws))
		testutil.Send(t, ws, `{"jsonrpc":"2.0","id":`+string(rune('6'+i))+`,"method":"public/test","params":{}}`)
		require.EqualValues(t, "1.2.26", testutil.RecvJSON(t, ws)["result"].(map[string]any)["version"].(string))
	}
	require.EqualValues(t, 3, srv.CountReceived("public/test"))

	// Stop answering: the server closes the connection after the next
	// request goes unanswered.
	require.EqualValues(t, `{"jsonrpc":"2.0","method":"heartbeat","params":{"type":"test_request"}}`, testutil.Recv(t, ws))
	require.NoError(t, ws.SetReadDeadline(time.Now().Add(5*time.Second)))
	if _, data, err := ws.ReadMessage(); err == nil {
		t.Fatalf("connection still open, got %s", data)
	}
	require.NoError(t, srv.WaitConnections(testutil.Context(t), 0))
}
