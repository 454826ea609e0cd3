package exchangetest_test

import (
	"testing"

	"github.com/wsfan/wsfan/pkg/exchangetest"
)

func TestThalexSubscribePublishUnsubscribe(t *testing.T) {
	srv := newServer(t, exchangetest.Thalex)
	srv.SetRefused("ticker.ETH-PERPETUAL.raw")
	ws := dial(t, srv)

	send(t, ws, `{"jsonrpc":"2.0","id":2,"method":"public/subscribe","params":{"channels":["ticker.BTC-PERPETUAL.raw","ticker.ETH-PERPETUAL.raw"]}}`)
	eq(t, `{"id":2,"result":["ticker.BTC-PERPETUAL.raw"]}`, recv(t, ws))
	must(t, srv.WaitSubscribers(ctxT(t), "ticker.BTC-PERPETUAL.raw", 1))
	eq(t, 0, srv.Subscribers("ticker.ETH-PERPETUAL.raw"))

	eq(t, 1, srv.Publish("ticker.BTC-PERPETUAL.raw", []byte(`{"mark_price":65000}`)))
	eq(t, 0, srv.Publish("ticker.ETH-PERPETUAL.raw", []byte(`{}`)))
	eq(t, `{"channel_name":"ticker.BTC-PERPETUAL.raw","notification":{"mark_price":65000}}`, recv(t, ws))

	send(t, ws, `{"id":3,"method":"public/unsubscribe","params":{"channels":["ticker.BTC-PERPETUAL.raw"]}}`)
	eq(t, `{"id":3,"result":["ticker.BTC-PERPETUAL.raw"]}`, recv(t, ws))
	eq(t, 0, srv.Subscribers("ticker.BTC-PERPETUAL.raw"))
	eq(t, 0, srv.Publish("ticker.BTC-PERPETUAL.raw", []byte(`{}`)))
	eq(t, 2, srv.CountReceived("public/subscribe")+srv.CountReceived("public/unsubscribe"))
}
