// Command first is the README's first program: it dials an exchange,
// calls a method and reads a ticker, against a test exchange on
// 127.0.0.1 that stands in for wss://thalex.com/ws/api/v2, so it runs
// anywhere:
//
//	go run ./examples/first
//
// To use it against Thalex, replace srv.URL() with the exchange's URL.
package main

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// Ticker is the part of a Thalex ticker this program reads.
type Ticker struct {
	MarkPrice float64 `json:"mark_price"`
	BestBid   float64 `json:"best_bid_price"`
	BestAsk   float64 `json:"best_ask_price"`
}

func main() {
	srv := exchangetest.NewServer(thalex.Name) // stands in for the exchange
	defer srv.Close()
	srv.StartFeed(exchangetest.FeedOptions{})

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, srv.URL(), client.WithProtocol(thalex.Protocol()))
	if err != nil {
		log.Fatal(err)
	}
	defer func() { _ = c.Close() }()

	var instruments []struct {
		Name string `json:"instrument_name"`
	}
	if err := c.Call(ctx, "public/instruments", nil, &instruments); err != nil {
		log.Fatal(err)
	}
	fmt.Println("instruments:", instruments)

	sub, err := c.Subscribe(ctx, []string{"ticker.BTC-PERPETUAL.raw"})
	if err != nil {
		log.Fatal(err)
	}
	n := 0
	for m, err := range sub.All() {
		if err != nil {
			log.Fatal(err)
		}
		tick, err := client.Decode[Ticker](m)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s mark %.1f bid %.1f ask %.1f\n", m.Topic, tick.MarkPrice, tick.BestBid, tick.BestAsk)
		if n++; n == 3 {
			break
		}
	}
}
