package exchangetest_test

import (
	"regexp"
	"testing"
	"time"

	"github.com/wsfan/wsfan/pkg/exchangetest"
)

func TestEtherealSubscribePublish(t *testing.T) {
	srv := newServer(t, exchangetest.Ethereal)
	srv.SetRefused("L2Book:ETHUSD")
	ws := dial(t, srv)

	send(t, ws, `{"event":"subscribe","data":{"type":"L2Book","symbol":"BTCUSD"}}`)
	send(t, ws, `{"event":"subscribe","data":{"type":"L2Book","symbol":"ETHUSD"}}`)
	send(t, ws, `{"event":"subscribe","data":{"type":"OrderUpdate","subaccountId":"sa-1"}}`)
	must(t, srv.WaitReceived(ctxT(t), "subscribe", 3))
	must(t, srv.WaitSubscribers(ctxT(t), "OrderUpdate:sa-1", 1))
	eq(t, 1, srv.Subscribers("L2Book:BTCUSD"))
	eq(t, 0, srv.Subscribers("L2Book:ETHUSD"))

	eq(t, 1, srv.Publish("L2Book:BTCUSD", []byte(`{"s":"BTCUSD"}`)))
	got := recv(t, ws) // no ack came before it
	if !regexp.MustCompile(`^\{"e":"L2Book","t":\d{13},"data":\{"s":"BTCUSD"\}\}$`).MatchString(got) {
		t.Fatalf("notification %s", got)
	}

	send(t, ws, `{"event":"unsubscribe","data":{"type":"L2Book","symbol":"BTCUSD"}}`)
	must(t, srv.WaitSubscribers(ctxT(t), "L2Book:BTCUSD", 0))
	send(t, ws, `{"event":"ping"}`)
	must(t, srv.WaitReceived(ctxT(t), "ping", 1))
	noMessage(t, ws, 50*time.Millisecond)
}
