package bench

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/ethereum"
	"github.com/wsfan/wsfan/pkg/exchangetest"
)

// BenchmarkNotify is notification throughput to a Go channel: the
// exchangetest server blasts ~615 B eth_subscription newHeads frames
// (REFERENCE.md, "Peers measured here") and the benchmark goroutine
// receives them. impl=wsfan reads Subscription.C(), impl=geth reads the
// channel given to go-ethereum's EthSubscribe (chan json.RawMessage, its
// cheapest element type), impl=gorilla calls ReadMessage on a raw
// connection: the floor. Same server, same frames, same flow-control window.
func BenchmarkNotify(b *testing.B) {
	b.Run("impl=wsfan", func(b *testing.B) {
		srv := notifyServer(b)
		c := dialWsfan(b, srv, client.Buffer(8192))
		sub, err := c.Subscribe(setupCtx(b), []string{"newHeads"})
		if err != nil {
			b.Fatal(err)
		}
		waitSubscribed(b, srv)
		var seq uint64
		b.ReportAllocs()
		stream(b, b.N, publishHeads(srv), func(i int) {
			for seq < uint64(i) { // a jump in Seq is a drop: skip ahead
				m, ok := <-sub.C()
				if !ok {
					b.Fatal("subscription ended")
				}
				seq = m.Seq
			}
		})
		b.ReportMetric(float64(sub.Dropped())/float64(b.N), "dropped/op")
	})
	b.Run("impl=geth", func(b *testing.B) {
		srv := notifyServer(b)
		c := dialGeth(b, srv)
		ch := make(chan json.RawMessage, 8192)
		sub, err := c.EthSubscribe(setupCtx(b), ch, "newHeads")
		if err != nil {
			b.Fatal(err)
		}
		defer sub.Unsubscribe()
		waitSubscribed(b, srv)
		b.ReportAllocs()
		stream(b, b.N, publishHeads(srv), func(int) {
			select {
			case <-ch:
			case err := <-sub.Err():
				b.Fatal(err)
			}
		})
	})
	b.Run("impl=gorilla", func(b *testing.B) {
		srv := notifyServer(b)
		ws := dialGorilla(b, srv)
		if _, err := gorillaCall(ws, ethRequest(1, "eth_subscribe", `["newHeads"]`)); err != nil {
			b.Fatal(err)
		}
		waitSubscribed(b, srv)
		b.ReportAllocs()
		stream(b, b.N, publishHeads(srv), func(int) {
			if typ, _, err := ws.ReadMessage(); err != nil || typ != websocket.TextMessage {
				b.Fatal(typ, err)
			}
		})
	})
}

func notifyServer(b *testing.B) *exchangetest.Server {
	srv := exchangetest.NewServer(ethereum.Name)
	b.Cleanup(srv.Close)
	return srv
}

func waitSubscribed(b *testing.B, srv *exchangetest.Server) {
	if err := srv.WaitSubscribers(setupCtx(b), "newHeads", 1); err != nil {
		b.Fatal(err)
	}
}

func publishHeads(srv *exchangetest.Server) func() {
	return func() {
		if srv.Publish("newHeads", NewHeads) != 1 {
			panic(fmt.Sprintf("newHeads published to no connection at %v", time.Now()))
		}
	}
}
