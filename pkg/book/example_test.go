package book_test

import (
	"context"
	"fmt"
	"time"

	"github.com/wsfan/wsfan/pkg/book"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/deribit"
	"github.com/wsfan/wsfan/pkg/exchangetest"
)

// Keep Deribit's BTC-PERPETUAL book and read its top from any goroutine.
func ExampleFollow() {
	ex := exchangetest.NewServer(deribit.Name) // stands in for wss://www.deribit.com/ws/api/v2
	defer ex.Close()
	ex.StartFeed(exchangetest.FeedOptions{Interval: 10 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	c, err := client.Dial(ctx, ex.URL(), client.WithProtocol(deribit.Protocol()))
	if err != nil {
		panic(err)
	}
	defer c.Close()
	b, err := book.Follow(ctx, c, "book.BTC-PERPETUAL.100ms")
	if err != nil {
		panic(err)
	}
	defer b.Close(ctx)

	ev := <-b.Events() // the snapshot has made the book valid
	bids, asks, ok := b.Top(5, nil, nil)
	fmt.Println(ev.Kind == book.Synced, ok, len(bids), len(asks), bids[0].Price.Cmp(asks[0].Price) < 0)
	// Output: true true 5 5 true
}
