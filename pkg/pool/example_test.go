package pool_test

import (
	"context"
	"fmt"
	"time"

	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/deribit"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/pool"
)

// A pool spreads topics over connections, at most perConnection a
// connection, and its subscriptions look like one client's.
func ExampleDial() {
	srv := exchangetest.NewServer(deribit.Name)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	p, err := pool.Dial(ctx, srv.URL(), 2, client.WithProtocol(deribit.Protocol()))
	if err != nil {
		panic(err)
	}
	defer p.Close()
	topics := []string{"ticker.BTC-PERPETUAL.100ms", "ticker.ETH-PERPETUAL.100ms", "ticker.SOL-PERPETUAL.100ms"}
	sub, err := p.Subscribe(ctx, topics)
	if err != nil {
		panic(err)
	}
	fmt.Println(len(sub.Topics()), "topics on", p.Connections(), "connections")
	// Output: 3 topics on 2 connections
}
