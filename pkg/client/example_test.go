package client_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/deribit"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/thalex"
)

func Example() {
	srv := exchangetest.NewServer(thalex.Name)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	c, err := client.Dial(ctx, srv.URL(), client.WithProtocol(thalex.Protocol(thalex.WithNotices(false))))
	if err != nil {
		panic(err)
	}
	defer c.Close()

	sub, err := c.Subscribe(ctx, []string{"ticker.BTC-PERPETUAL.raw"})
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
	srv := exchangetest.NewServer(deribit.Name, exchangetest.WithLogin(deribit.NewServerLogin("demo-client", "demo-secret")))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	// Credentials come from the environment (here: the demo's), never
	// from flags.
	os.Setenv("DERIBIT_CLIENT_ID", "demo-client")
	os.Setenv("DERIBIT_CLIENT_SECRET", "demo-secret")
	key := deribit.NewKey(os.Getenv("DERIBIT_CLIENT_ID"), os.Getenv("DERIBIT_CLIENT_SECRET"))

	// Log in on every connection, before private channels are restored.
	c, err := client.Dial(ctx, srv.URL(), client.WithProtocol(deribit.Protocol()), client.WithOnConnect(deribit.Login(key)))
	if err != nil {
		panic(err)
	}
	defer c.Close()
	sub, err := c.Subscribe(ctx, []string{"user.orders.BTC-PERPETUAL.raw"})
	fmt.Println(err == nil, sub.Topics())
	// Output: true [user.orders.BTC-PERPETUAL.raw]
}
