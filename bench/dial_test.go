package bench

import (
	"context"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/rpc"

	"github.com/wsfan/wsfan/pkg/client"
)

// BenchmarkDialTimeout dials a listener that accepts TCP connections but
// never answers the WebSocket handshake, with a dial timeout of 100, 500
// and 1000 ms, and reports how long the dial actually took (Brane:
// connect timeout 100 / 500 / 1000 ms took 104.8 / 502.9 / 1006.4 ms).
// impl=wsfan sets client.WithDialTimeout; impl=geth bounds rpc.DialContext
// with a context deadline, its only way.
func BenchmarkDialTimeout(b *testing.B) {
	for _, ms := range []int{100, 500, 1000} {
		timeout := time.Duration(ms) * time.Millisecond
		b.Run(fmt.Sprintf("timeout=%dms/impl=wsfan", ms), func(b *testing.B) {
			url := blackhole(b)
			runDialTimeout(b, func() error {
				c, err := client.Dial(context.Background(), url, client.WithDialTimeout(timeout))
				if err == nil {
					_ = c.Close()
				}
				return err
			})
		})
		b.Run(fmt.Sprintf("timeout=%dms/impl=geth", ms), func(b *testing.B) {
			url := blackhole(b)
			runDialTimeout(b, func() error {
				ctx, cancel := context.WithTimeout(context.Background(), timeout)
				defer cancel()
				c, err := rpc.DialContext(ctx, url)
				if err == nil {
					c.Close()
				}
				return err
			})
		})
	}
}

func runDialTimeout(b *testing.B, dial func() error) {
	var total time.Duration
	for b.Loop() {
		start := time.Now()
		if err := dial(); err == nil {
			b.Fatal("dial succeeded against a server that never upgrades")
		}
		total += time.Since(start)
	}
	b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "actual-ms")
}

// blackhole listens on loopback, accepts connections and never reads or
// writes them; everything is closed when b ends. It returns a ws:// URL.
func blackhole(b *testing.B) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	var (
		mu    sync.Mutex
		conns []net.Conn
		done  = make(chan struct{})
	)
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	b.Cleanup(func() {
		_ = ln.Close()
		<-done
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	return "ws://" + ln.Addr().String() + "/ws"
}
