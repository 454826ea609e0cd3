package exchangetest_test

import (
	"context"
	"fmt"
	"time"

	"github.com/gorilla/websocket"

	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// A test starts a Thalex server, subscribes with any WebSocket client and
// publishes a notification to it.
func Example() {
	srv := exchangetest.NewServer(thalex.Name)
	defer srv.Close()

	ws, _, err := websocket.DefaultDialer.Dial(srv.URL(), nil)
	if err != nil {
		panic(err)
	}
	defer ws.Close()

	_ = ws.WriteMessage(websocket.TextMessage, []byte(
		`{"jsonrpc":"2.0","id":2,"method":"public/subscribe","params":{"channels":["ticker.BTC-PERPETUAL.raw"]}}`))
	_, ack, _ := ws.ReadMessage()
	fmt.Println(string(ack))

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = srv.WaitSubscribers(ctx, "ticker.BTC-PERPETUAL.raw", 1)
	srv.Publish("ticker.BTC-PERPETUAL.raw", []byte(`{"mark_price":65000.5}`))
	_, note, _ := ws.ReadMessage()
	fmt.Println(string(note))
	fmt.Println(srv.CountReceived("public/subscribe"))

	// Output:
	// {"id":2,"result":["ticker.BTC-PERPETUAL.raw"]}
	// {"channel_name":"ticker.BTC-PERPETUAL.raw","notification":{"mark_price":65000.5}}
	// 1
}
