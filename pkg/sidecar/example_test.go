package sidecar_test

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/sidecar"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// A sidecar inside a program: one upstream connection, served on a
// loopback port to local programs, which speak the exchange's own
// protocol to it (here: the SDK, pointed at the sidecar's /ws).
func ExampleNew() {
	exchange := exchangetest.NewServer(thalex.Name) // stands in for wss://thalex.com/ws/api/v2
	defer exchange.Close()

	sc, err := sidecar.New(sidecar.Config{Upstream: exchange.URL(), Protocol: thalex.Name})
	if err != nil {
		panic(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	served := make(chan error, 1)
	serveCtx, stop := context.WithCancel(ctx)
	go func() { served <- sc.Serve(serveCtx, ln) }() // Serve closes the sidecar when serveCtx ends
	defer func() { stop(); <-served }()

	local, err := client.Dial(ctx, "ws://"+ln.Addr().String()+"/ws", client.WithProtocol(thalex.Protocol()))
	if err != nil {
		panic(err)
	}
	defer local.Close()
	sub, err := local.Subscribe(ctx, []string{"ticker.BTC-PERPETUAL.raw"})
	if err != nil {
		panic(err)
	}
	_ = exchange.WaitSubscribers(ctx, "ticker.BTC-PERPETUAL.raw", 1)
	exchange.Publish("ticker.BTC-PERPETUAL.raw", []byte(`{"mark_price":65000.5}`))
	m := <-sub.C()
	fmt.Println(m.Topic, string(m.Data))
	// Output: ticker.BTC-PERPETUAL.raw {"mark_price":65000.5}
}
