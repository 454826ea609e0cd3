package exchangetest_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/wsfan/wsfan/pkg/ethereum"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// BenchmarkPublish measures Publish to subscribers that drain their
// connections as fast as they can.
func BenchmarkPublish(b *testing.B) {
	for _, subs := range []int{1, 10} {
		for _, d := range []exchangetest.Dialect{thalex.Name, ethereum.Name} {
			b.Run(fmt.Sprintf("%s/subs=%d", d, subs), func(b *testing.B) {
				benchPublish(b, d, subs)
			})
		}
	}
}

func benchPublish(b *testing.B, d exchangetest.Dialect, subs int) {
	srv := exchangetest.NewServer(d)
	defer srv.Close()
	topic, sub := "ticker.BTC-PERPETUAL.raw", `{"id":1,"method":"public/subscribe","params":{"channels":["ticker.BTC-PERPETUAL.raw"]}}`
	if d == ethereum.Name {
		topic, sub = "newHeads", `{"jsonrpc":"2.0","id":1,"method":"eth_subscribe","params":["newHeads"]}`
	}
	done := make(chan struct{}, subs)
	for range subs {
		ws, _, err := websocket.DefaultDialer.Dial(srv.URL(), nil)
		if err != nil {
			b.Fatal(err)
		}
		defer ws.Close()
		if err := ws.WriteMessage(websocket.TextMessage, []byte(sub)); err != nil {
			b.Fatal(err)
		}
		go func() { // drain until the server closes the connection
			defer func() { done <- struct{}{} }()
			for {
				if _, _, err := ws.NextReader(); err != nil {
					return
				}
			}
		}()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.WaitSubscribers(ctx, topic, subs); err != nil {
		b.Fatal(err)
	}
	data := []byte(`{"best_bid_price":65000.5,"best_bid_amount":1.25,"best_ask_price":65001,"best_ask_amount":0.5}`)
	b.ReportAllocs()
	b.SetBytes(int64(len(data) * subs))
	b.ResetTimer()
	for range b.N {
		srv.Publish(topic, data)
	}
	b.StopTimer()
	srv.Close()
	for range subs {
		<-done
	}
}
