package client_test

import (
	"context"
	"fmt"
	"time"

	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/deribit"
	"github.com/wsfan/wsfan/pkg/ethereum"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// Call sends a request and decodes its result; an error the server
// answers is a *client.RPCError (use errors.As).
func ExampleClient_Call() {
	node := exchangetest.NewServer(ethereum.Name) // stands in for a node's ws:// URL
	defer node.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	c, err := client.Dial(ctx, node.URL(), client.WithProtocol(ethereum.Protocol()))
	if err != nil {
		panic(err)
	}
	defer c.Close()
	var chainID string
	if err := c.Call(ctx, "eth_chainId", nil, &chainID); err != nil {
		panic(err)
	}
	err = c.Call(ctx, "eth_noSuchMethod", nil, nil)
	fmt.Println(chainID, err)
	// Output: 0x1 call eth_noSuchMethod: rpc error -32601: method not found
}

// Ethereum topics are eth_subscribe's params: "newHeads", or a JSON
// array for a subscription with arguments, such as logs with a filter.
func ExampleClient_Subscribe_ethereum() {
	node := exchangetest.NewServer(ethereum.Name)
	defer node.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	c, err := client.Dial(ctx, node.URL(), client.WithProtocol(ethereum.Protocol()))
	if err != nil {
		panic(err)
	}
	defer c.Close()
	logs := `["logs",{"address":"0xdac17f958d2ee523a2206206994597c13d831ec7"}]`
	sub, err := c.Subscribe(ctx, []string{"newHeads", logs})
	if err != nil {
		panic(err)
	}
	node.Publish(logs, []byte(`{"logIndex":"0x0","data":"0x"}`))
	m := <-sub.C()
	fmt.Println(m.Topic == logs, string(m.Data))
	// Output: true {"logIndex":"0x0","data":"0x"}
}

// All ranges over a subscription's messages until it ends or the loop
// breaks; the error, if any, comes last.
func ExampleSubscription_All() {
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
	for i := range 3 {
		srv.Publish("ticker.BTC-PERPETUAL.raw", fmt.Appendf(nil, `{"mark_price":%d}`, 65000+i))
	}
	for m, err := range sub.All() {
		if err != nil {
			panic(err)
		}
		fmt.Println(m.Seq, string(m.Data))
		if m.Seq == 3 {
			break
		}
	}
	// Output:
	// 1 {"mark_price":65000}
	// 2 {"mark_price":65001}
	// 3 {"mark_price":65002}
}

// Events tell a program what the connection does; after a reconnect
// every subscription is restored in one write, and the first message of
// each topic is flagged.
func ExampleClient_Events() {
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

	srv.DropConnectionOf("ticker.BTC-PERPETUAL.raw") // the network fails
	for ev := range c.Events() {
		if ev.Kind == client.Disconnected || ev.Kind == client.Resubscribed {
			fmt.Println(ev.Kind)
		}
		if ev.Kind == client.Resubscribed {
			break
		}
	}
	_ = srv.WaitSubscribers(ctx, "ticker.BTC-PERPETUAL.raw", 1)
	srv.Publish("ticker.BTC-PERPETUAL.raw", []byte(`{"mark_price":65000}`))
	fmt.Println((<-sub.C()).Reconnected())
	// Output:
	// disconnected
	// resubscribed
	// true
}

// A rate limit makes a burst of calls wait for its turn instead of being
// refused by the exchange (and, on Deribit, losing the session).
func ExampleWithRateLimit() {
	srv := exchangetest.NewServer(deribit.Name)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// Deribit's credit model for non-matching-engine requests: 500
	// credits a request, 50,000 at most, 10,000 refilled a second.
	c, err := client.Dial(ctx, srv.URL(), client.WithProtocol(deribit.Protocol()),
		client.WithRateLimit(client.RateLimit{Rate: 10_000, Burst: 50_000, Cost: func(string) int { return 500 }}))
	if err != nil {
		panic(err)
	}
	defer c.Close()
	start := time.Now()
	for range 110 { // 100 at once, then 20 a second
		var ms int64
		if err := c.Call(ctx, "public/get_time", nil, &ms); err != nil {
			panic(err)
		}
	}
	fmt.Println(time.Since(start) >= 400*time.Millisecond)
	// Output: true
}
