package okx_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/wsfan/wsfan/pkg/auth"
	"github.com/wsfan/wsfan/pkg/book"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/okx"
)

// Log in to OKX on every connection, so the private channels come back
// after a reconnect, and subscribe a private channel and a public one in
// one request. The key, its secret and its passphrase come from the
// environment.
func ExampleLogin() {
	url, stop := demoOKX() // stands in for wss://ws.okx.com:8443/ws/v5/private
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	key, err := auth.Secret("OKX_API_KEY")
	if err != nil {
		panic(err)
	}
	secret, err := auth.Secret("OKX_SECRET_KEY")
	if err != nil {
		panic(err)
	}
	passphrase, err := auth.Secret("OKX_PASSPHRASE")
	if err != nil {
		panic(err)
	}
	c, err := client.Dial(ctx, url,
		client.WithProtocol(okx.Protocol()),
		client.WithOnConnect(okx.Login(okx.NewKey(key, secret, passphrase))))
	if err != nil {
		panic(err)
	}
	defer c.Close()
	sub, err := c.Subscribe(ctx, []string{"orders:instType=ANY", "tickers:BTC-USDT"})
	fmt.Println(sub.Topics(), err)
	// Output: [orders:instType=ANY tickers:BTC-USDT] <nil>
}

// Keep OKX's BTC-USDT book, chained by seqId, and read its best prices
// once it is the exchange's.
func ExampleBookRules() {
	srv := exchangetest.NewServer(okx.Name) // stands in for wss://ws.okx.com:8443/ws/v5/public
	defer srv.Close()
	srv.StartFeed(exchangetest.FeedOptions{Instruments: []string{"BTC-USDT"}, Interval: 10 * time.Millisecond})
	defer srv.StopFeed()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	c, err := client.Dial(ctx, srv.URL(), client.WithProtocol(okx.Protocol()))
	if err != nil {
		panic(err)
	}
	defer c.Close()
	b, err := book.Follow(ctx, c, "books:BTC-USDT") // the rules are okx.BookRules
	if err != nil {
		panic(err)
	}
	defer b.Close(ctx)
	for !b.Valid() {
		select {
		case <-b.Changed():
		case <-ctx.Done():
			panic("no book")
		}
	}
	bid, ask, ok := b.Best()
	fmt.Println(ok, bid.Price.Cmp(ask.Price) < 0)
	// Output: true true
}

// demoOKX starts a test exchange that checks the demo key, and puts the
// credentials where a deployment would: in the environment. It returns
// its URL and a function that stops it.
func demoOKX() (string, func()) {
	os.Setenv("OKX_API_KEY", "demo-key")
	os.Setenv("OKX_SECRET_KEY", "demo-secret")
	os.Setenv("OKX_PASSPHRASE", "demo-passphrase")
	srv := exchangetest.NewServer(okx.Name, exchangetest.WithLogin(okx.NewServerLogin("demo-key", "demo-secret", "demo-passphrase")))
	return srv.URL(), srv.Close
}
