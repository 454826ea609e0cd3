package client_test

import (
	"context"
	"fmt"
	"time"

	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/protocol"
)

func Example() {
	srv := exchangetest.NewServer(exchangetest.Thalex)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	c, err := client.Dial(ctx, srv.URL(), client.WithProtocol(protocol.Thalex()))
	if err != nil {
		panic(err)
	}
	defer c.Close()

	sub, err := c.Subscribe(ctx, "ticker.BTC-PERPETUAL.raw")
	if err != nil {
		panic(err)
	}
	srv.Publish("ticker.BTC-PERPETUAL.raw", []byte(`{"mark_price":68012.5}`))

	m := <-sub.C()
	var ticker struct {
		MarkPrice float64 `json:"mark_price"`
	}
	if err := m.Decode(&ticker); err != nil {
		panic(err)
	}
	fmt.Println(m.Topic, m.Seq, ticker.MarkPrice)
	// Output: ticker.BTC-PERPETUAL.raw 1 68012.5
}

func ExampleWithOnConnect() {
	srv := exchangetest.NewServer(exchangetest.Thalex, exchangetest.WithCredentials("key", "secret"))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	// Log in on every connection, before private channels are restored.
	login := func(ctx context.Context, c *client.Client) error {
		return c.Call(ctx, "public/login", map[string]string{"key": "key", "secret": "secret"}, nil)
	}
	c, err := client.Dial(ctx, srv.URL(), client.WithProtocol(protocol.Thalex()), client.WithOnConnect(login))
	if err != nil {
		panic(err)
	}
	defer c.Close()
	sub, err := c.Subscribe(ctx, "account.orders")
	fmt.Println(err == nil, sub.Topics())
	// Output: true [account.orders]
}
