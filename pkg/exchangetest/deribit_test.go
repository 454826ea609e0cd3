package exchangetest_test

import (
	"regexp"
	"testing"
	"time"

	"github.com/wsfan/wsfan/pkg/exchangetest"
)

func TestDeribitSubscribePublish(t *testing.T) {
	srv := newServer(t, exchangetest.Deribit)
	srv.SetRefused("book.ETH-PERPETUAL.100ms")
	ws := dial(t, srv)

	send(t, ws, `{"jsonrpc":"2.0","id":3600,"method":"public/subscribe","params":{"channels":["book.BTC-PERPETUAL.100ms","book.ETH-PERPETUAL.100ms"]}}`)
	ack := recv(t, ws)
	re := regexp.MustCompile(`^\{"jsonrpc":"2.0","id":3600,"result":\["book.BTC-PERPETUAL.100ms"\],"usIn":\d+,"usOut":\d+,"usDiff":\d+,"testnet":true\}$`)
	if !re.MatchString(ack) {
		t.Fatalf("ack %s", ack)
	}
	eq(t, 1, srv.Subscribers("book.BTC-PERPETUAL.100ms"))
	eq(t, 1, srv.Publish("book.BTC-PERPETUAL.100ms", []byte(`{"change_id":2}`)))
	eq(t, `{"jsonrpc":"2.0","method":"subscription","params":{"channel":"book.BTC-PERPETUAL.100ms","data":{"change_id":2}}}`, recv(t, ws))

	send(t, ws, `[{"jsonrpc":"2.0","id":1,"method":"public/test"}]`)
	eq(t, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"batch requests are not supported"}}`, recv(t, ws))

	send(t, ws, `{"jsonrpc":"2.0","id":5,"method":"public/unsubscribe","params":{"channels":["book.BTC-PERPETUAL.100ms"]}}`)
	eq(t, "book.BTC-PERPETUAL.100ms", recvJSON(t, ws)["result"].([]any)[0].(string))
	eq(t, 0, srv.Subscribers("book.BTC-PERPETUAL.100ms"))
}

func TestDeribitAuthGatesUserChannels(t *testing.T) {
	srv := newServer(t, exchangetest.Deribit, exchangetest.WithCredentials("id", "secret"))
	ws := dial(t, srv)

	send(t, ws, `{"jsonrpc":"2.0","id":1,"method":"private/subscribe","params":{"channels":["user.orders.any.any.raw"]}}`)
	eq(t, 0, len(recvJSON(t, ws)["result"].([]any)))

	send(t, ws, `{"jsonrpc":"2.0","id":2,"method":"public/auth","params":{"grant_type":"client_credentials","client_id":"id","client_secret":"bad"}}`)
	eq(t, `{"jsonrpc":"2.0","id":2,"error":{"code":13004,"message":"invalid_credentials"}}`, recv(t, ws))

	send(t, ws, `{"jsonrpc":"2.0","id":3,"method":"public/auth","params":{"grant_type":"client_credentials","client_id":"id","client_secret":"secret"}}`)
	res := recvJSON(t, ws)["result"].(map[string]any)
	eq(t, "bearer", res["token_type"].(string))
	eq(t, 900.0, res["expires_in"].(float64))

	send(t, ws, `{"jsonrpc":"2.0","id":4,"method":"private/subscribe","params":{"channels":["user.orders.any.any.raw"]}}`)
	eq(t, "user.orders.any.any.raw", recvJSON(t, ws)["result"].([]any)[0].(string))
}

func TestDeribitHeartbeat(t *testing.T) {
	srv := newServer(t, exchangetest.Deribit)
	ws := dial(t, srv)

	send(t, ws, `{"jsonrpc":"2.0","id":5,"method":"public/set_heartbeat","params":{"interval":0.05}}`)
	eq(t, "ok", recvJSON(t, ws)["result"].(string))
	for i := range 3 {
		eq(t, `{"jsonrpc":"2.0","method":"heartbeat","params":{"type":"test_request"}}`, recv(t, ws))
		send(t, ws, `{"jsonrpc":"2.0","id":`+string(rune('6'+i))+`,"method":"public/test","params":{}}`)
		eq(t, "1.2.26", recvJSON(t, ws)["result"].(map[string]any)["version"].(string))
	}
	eq(t, 3, srv.CountReceived("public/test"))

	// Stop answering: the server closes the connection after the next
	// request goes unanswered.
	eq(t, `{"jsonrpc":"2.0","method":"heartbeat","params":{"type":"test_request"}}`, recv(t, ws))
	must(t, ws.SetReadDeadline(time.Now().Add(5*time.Second)))
	if _, data, err := ws.ReadMessage(); err == nil {
		t.Fatalf("connection still open, got %s", data)
	}
	must(t, srv.WaitConnections(ctxT(t), 0))
}
