package exchangetest_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/thalex"
)

func TestThalexSubscribePublishUnsubscribe(t *testing.T) {
	srv := newServer(t, thalex.Name)
	srv.SetRefused("ticker.ETH-PERPETUAL.raw")
	ws := dial(t, srv)

	testutil.Send(t, ws, `{"jsonrpc":"2.0","id":2,"method":"public/subscribe","params":{"channels":["ticker.BTC-PERPETUAL.raw","ticker.ETH-PERPETUAL.raw"]}}`)
	require.EqualValues(t, `{"id":2,"result":["ticker.BTC-PERPETUAL.raw"]}`, testutil.Recv(t, ws))
	require.NoError(t, srv.WaitSubscribers(testutil.Context(t), "ticker.BTC-PERPETUAL.raw", 1))
	require.EqualValues(t, 0, srv.Subscribers("ticker.ETH-PERPETUAL.raw"))

	require.EqualValues(t, 1, srv.Publish("ticker.BTC-PERPETUAL.raw", []byte(`{"mark_price":65000}`)))
	require.EqualValues(t, 0, srv.Publish("ticker.ETH-PERPETUAL.raw", []byte(`{}`)))
	require.EqualValues(t, `{"channel_name":"ticker.BTC-PERPETUAL.raw","notification":{"mark_price":65000}}`, testutil.Recv(t, ws))

	// Thalex has no public/unsubscribe: its one method is unsubscribe.
	testutil.Send(t, ws, `{"id":3,"method":"public/unsubscribe","params":{"channels":["ticker.BTC-PERPETUAL.raw"]}}`)
	require.EqualValues(t, `{"id":3,"error":{"code":-32601,"message":"method not found"}}`, testutil.Recv(t, ws))
	require.EqualValues(t, 1, srv.Subscribers("ticker.BTC-PERPETUAL.raw"))
	testutil.Send(t, ws, `{"id":4,"method":"unsubscribe","params":{"channels":["ticker.BTC-PERPETUAL.raw"]}}`)
	require.EqualValues(t, `{"id":4,"result":["ticker.BTC-PERPETUAL.raw"]}`, testutil.Recv(t, ws))
	require.EqualValues(t, 0, srv.Subscribers("ticker.BTC-PERPETUAL.raw"))
	require.EqualValues(t, 0, srv.Publish("ticker.BTC-PERPETUAL.raw", []byte(`{}`)))
	require.EqualValues(t, 2, srv.CountReceived("public/subscribe")+srv.CountReceived("unsubscribe"))
}

func TestThalexPrivateChannelsNeedLogin(t *testing.T) {
	key := testutil.RSAKeys()[0]
	srv := newServer(t, thalex.Name, exchangetest.WithLogin(thalex.NewServerLogin(thalex.ServerKey{ID: "k", Public: &key.PublicKey})))
	token := func(kid string) string {
		return thalexToken(t, jwt.SigningMethodRS512, key, kid, jwt.MapClaims{"iat": time.Now().Unix()})
	}
	ws := dial(t, srv)

	testutil.Send(t, ws, `{"id":1,"method":"private/subscribe","params":{"channels":["account.orders","ticker.BTC-PERPETUAL.raw"]}}`)
	require.EqualValues(t, `{"id":1,"result":["ticker.BTC-PERPETUAL.raw"]}`, testutil.Recv(t, ws))

	testutil.Send(t, ws, `{"id":2,"method":"public/login","params":{"token":"`+token("wrong")+`"}}`)
	require.EqualValues(t, `{"id":2,"error":{"code":19,"message":"authentication failed","data":"unknown key id"}}`, testutil.Recv(t, ws))

	testutil.Send(t, ws, `{"id":3,"method":"public/login","params":{"token":"`+token("k")+`"}}`)
	require.EqualValues(t, `{"id":3,"result":{"account_number":"A000001"}}`, testutil.Recv(t, ws))

	testutil.Send(t, ws, `{"id":4,"method":"public/subscribe","params":{"channels":["session.orders"]}}`)
	require.EqualValues(t, `{"id":4,"result":[]}`, testutil.Recv(t, ws))
	testutil.Send(t, ws, `{"id":5,"method":"private/subscribe","params":{"channels":["account.orders","session.orders"]}}`)
	require.EqualValues(t, `{"id":5,"result":["account.orders","session.orders"]}`, testutil.Recv(t, ws))
	require.NoError(t, srv.WaitSubscribers(testutil.Context(t), "session.orders", 1))

	// Login is per connection.
	ws2 := dial(t, srv)
	testutil.Send(t, ws2, `{"id":1,"method":"private/subscribe","params":{"channels":["account.orders"]}}`)
	require.EqualValues(t, `{"id":1,"result":[]}`, testutil.Recv(t, ws2))
}

func TestThalexTopicsAndBatchCap(t *testing.T) {
	srv := newServer(t, thalex.Name,
		exchangetest.WithTopics("a", "b", "c"), exchangetest.WithBatchCap(2))
	ws := dial(t, srv)

	testutil.Send(t, ws, `{"id":1,"method":"public/subscribe","params":{"channels":["a","b","c"]}}`)
	require.EqualValues(t, `{"id":1,"error":{"code":-32600,"message":"too many channels"}}`, testutil.Recv(t, ws))
	testutil.Send(t, ws, `{"id":2,"method":"public/subscribe","params":{"channels":["a","zzz"]}}`)
	require.EqualValues(t, `{"id":2,"result":["a"]}`, testutil.Recv(t, ws))
}

func TestThalexHandlersAndErrors(t *testing.T) {
	srv := newServer(t, thalex.Name)
	srv.Handle("public/instruments", func(params json.RawMessage) (any, *protocol.Error) {
		return json.RawMessage(`[{"instrument_name":"BTC-PERPETUAL"}]`), nil
	})
	srv.Handle("private/insert", func(params json.RawMessage) (any, *protocol.Error) {
		return nil, &protocol.Error{Code: 4, Message: "throttle exceeded"}
	})
	ws := dial(t, srv)

	testutil.Send(t, ws, `{"jsonrpc":"2.0","id":7,"method":"public/instruments","params":{}}`)
	require.EqualValues(t, `{"id":7,"result":[{"instrument_name":"BTC-PERPETUAL"}]}`, testutil.Recv(t, ws))
	testutil.Send(t, ws, `{"id":8,"method":"private/insert"}`)
	require.EqualValues(t, `{"id":8,"error":{"code":4,"message":"throttle exceeded"}}`, testutil.Recv(t, ws))
	testutil.Send(t, ws, `{"id":9,"method":"nope"}`)
	require.EqualValues(t, `{"id":9,"error":{"code":-32601,"message":"method not found"}}`, testutil.Recv(t, ws))
	testutil.Send(t, ws, `{"id":10,"method":`)
	require.EqualValues(t, `{"id":null,"error":{"code":-32700,"message":"parse error"}}`, testutil.Recv(t, ws))
}
