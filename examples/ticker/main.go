// Command ticker subscribes to a few tickers and prints them.
//
// By default it runs offline against an embedded pkg/exchangetest server
// with a generated feed; -url and -protocol point it at a real endpoint:
//
//	go run ./examples/ticker
//	go run ./examples/ticker -url wss://thalex.com/ws/api/v2 -protocol thalex
//	go run ./examples/ticker -url wss://www.deribit.com/ws/api/v2 -protocol deribit -topics ticker.BTC-PERPETUAL.100ms
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/protocol"

	// Every exchange wsfan speaks, registered for -protocol.
	_ "github.com/wsfan/wsfan/pkg/exchanges"
)

func main() {
	url := flag.String("url", "", "WebSocket endpoint; empty runs an embedded test exchange")
	dialect := flag.String("protocol", "thalex", "the exchange's dialect: "+strings.Join(protocol.Names(), ", "))
	topics := flag.String("topics", "", "comma-separated topics; default: the test feed's tickers")
	count := flag.Int("n", 20, "stop after this many messages (0: run until interrupted)")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *url, *dialect, *topics, *count); err != nil {
		fmt.Fprintln(os.Stderr, "ticker:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, url, dialect, topicList string, count int) error {
	proto, err := protocol.ByName(dialect)
	if err != nil {
		return err
	}
	var topics []string
	if topicList != "" {
		topics = strings.Split(topicList, ",")
	}
	if url == "" {
		d, err := exchangetest.ParseDialect(dialect)
		if err != nil {
			return err
		}
		srv := exchangetest.NewServer(d)
		defer srv.Close()
		srv.StartFeed(exchangetest.FeedOptions{Interval: 50 * time.Millisecond})
		url = srv.URL()
		if topics == nil {
			topics = tickers(srv.FeedTopics())
		}
		fmt.Printf("offline: embedded %s test exchange at %s\n", dialect, url)
	}
	if len(topics) == 0 {
		return fmt.Errorf("no topics: pass -topics")
	}

	c, err := client.Dial(ctx, url, client.WithProtocol(proto))
	if err != nil {
		return err
	}
	defer func() { _ = c.Close() }()
	sub, err := c.Subscribe(ctx, topics)
	if err != nil {
		return err
	}
	fmt.Printf("subscribed to %s\n", strings.Join(topics, ", "))

	for n := 0; count == 0 || n < count; n++ {
		select {
		case <-ctx.Done():
			return nil
		case err := <-sub.Err():
			return err
		case m := <-sub.C():
			fmt.Printf("%s  %-32s #%-4d %s\n", m.RecvTime.Format("15:04:05.000"), m.Topic, m.Seq, abbreviate(m.Data, 100))
		}
	}
	return nil
}

// tickers keeps the feed's ticker-like topics (all of them if none is).
func tickers(all []string) []string {
	var out []string
	for _, t := range all {
		if strings.Contains(t, "ticker") || strings.HasPrefix(t, "Ticker:") || t == "newHeads" {
			out = append(out, t)
		}
	}
	if out == nil {
		return all
	}
	return out
}

func abbreviate(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	return string(b[:n]) + "…"
}
