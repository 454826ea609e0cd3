package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/bytedance/sonic"
	"github.com/gorilla/websocket"

	"github.com/wsfan/wsfan/pkg/ethereal"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// topicCounts are the subscription set sizes of the Ethereal report.
var topicCounts = []int{1, 10, 50, 100}

// topicNames returns n distinct topics of the dialect.
func topicNames(p protocol.Protocol, n int) []string {
	names := make([]string, n)
	for i := range names {
		switch p.Name() {
		case "ethereal":
			names[i] = fmt.Sprintf("Ticker:SYM%dUSD", i)
		case "ethereum":
			names[i] = fmt.Sprintf(`["logs",{"address":"%s"}]`, address(i))
		default:
			names[i] = fmt.Sprintf("ticker.I%d-PERPETUAL.raw", i)
		}
	}
	return names
}

func newTopics(b *testing.B, p protocol.Protocol, names []string) []*protocol.Topic {
	topics := make([]*protocol.Topic, len(names))
	for i, n := range names {
		t, err := p.NewTopic(n)
		if err != nil {
			b.Fatal(err)
		}
		topics[i] = t
	}
	return topics
}

// BenchmarkTopicEncode validates and encodes one Ethereal subscription
// once, as Subscribe does (Ethereal SDK: product 105.7 ns, subaccount
// 104.2 ns).
func BenchmarkTopicEncode(b *testing.B) {
	p := ethereal.Protocol()
	for _, c := range []struct{ kind, name string }{
		{"product", "Ticker:BTCUSD"},
		{"subaccount", "OrderUpdate:7f3c9a12-5b7e-4c1d-9d2e-0a1b2c3d4e5f"},
	} {
		b.Run("kind="+c.kind, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := p.NewTopic(c.name); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSubscriptionJSON is the Ethereal SDK's "JSON value → string"
// (298.5 ns) and "value clone" (78.6 ns): building a subscribe message as
// a generic JSON value and serializing it (impl=sonic-map,
// impl=encoding-json-map), against what wsfan does on every reconnect:
// reuse the cached bytes (impl=cached, nothing to do) or copy them
// (impl=cached-copy).
func BenchmarkSubscriptionJSON(b *testing.B) {
	value := func() map[string]any {
		return map[string]any{"event": "subscribe", "data": map[string]any{"type": "Ticker", "symbol": "BTCUSD"}}
	}
	b.Run("impl=sonic-map", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := sonic.Marshal(value()); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("impl=encoding-json-map", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(value()); err != nil {
				b.Fatal(err)
			}
		}
	})
	p := ethereal.Protocol()
	topics := newTopics(b, p, []string{"Ticker:BTCUSD"})
	var batch protocol.Batch
	var id uint64
	nextID := func() uint64 { id++; return id }
	p.Subscribe(&batch, topics, nextID, 0)
	cached := batch.Messages[0]
	b.Run("impl=cached", func(b *testing.B) {
		var batch protocol.Batch
		b.ReportAllocs()
		for b.Loop() {
			batch.Reset()
			p.Subscribe(&batch, topics, nextID, 0)
		}
		if !bytes.Equal(batch.Messages[0], cached) {
			b.Fatal("frame changed")
		}
	})
	b.Run("impl=cached-copy", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = bytes.Clone(cached)
		}
	})
}

// BenchmarkSubscriptionSet copies the subscription set when a connection
// comes up, as the reconnect path gathers its topics (Ethereal SDK: clone
// the list of 10 / 50 / 100: 0.96 / 10.3 / 20.7 µs). wsfan's topics are
// pointers to encoded topics, so this is a slice copy.
func BenchmarkSubscriptionSet(b *testing.B) {
	p := ethereal.Protocol()
	for _, n := range []int{10, 50, 100} {
		b.Run(fmt.Sprintf("topics=%d", n), func(b *testing.B) {
			topics := newTopics(b, p, topicNames(p, n))
			b.ReportAllocs()
			for b.Loop() {
				if len(slices.Clone(topics)) != n {
					b.Fatal("short copy")
				}
			}
		})
	}
}

// BenchmarkResubscribeEncode builds the subscribe messages of n topics for
// a reconnect (Ethereal SDK: re-serialize each of 1 / 10 / 50 / 100: 0.196
// / 1.95 / 9.77 / 19.5 µs; their target after caching: 100 in ~1.8 µs, one
// batched frame). mode=fresh encodes every topic anew (NewTopic, then
// Subscribe); mode=cached is what wsfan does: Subscribe from the topics
// encoded when they were first subscribed. Ethereal sends one frame per
// topic (shared, not copied); Thalex batches every topic into one frame.
func BenchmarkResubscribeEncode(b *testing.B) {
	for _, p := range []protocol.Protocol{ethereal.Protocol(), thalex.Protocol()} {
		for _, n := range topicCounts {
			names := topicNames(p, n)
			topics := newTopics(b, p, names)
			var id uint64
			next := func() uint64 { id++; return id }
			b.Run(fmt.Sprintf("dialect=%s/topics=%d/mode=fresh", p.Name(), n), func(b *testing.B) {
				var batch protocol.Batch
				fresh := make([]*protocol.Topic, n)
				b.ReportAllocs()
				for b.Loop() {
					batch.Reset()
					for i, name := range names {
						t, err := p.NewTopic(name)
						if err != nil {
							b.Fatal(err)
						}
						fresh[i] = t
					}
					p.Subscribe(&batch, fresh, next, 0)
				}
			})
			b.Run(fmt.Sprintf("dialect=%s/topics=%d/mode=cached", p.Name(), n), func(b *testing.B) {
				var batch protocol.Batch
				b.ReportAllocs()
				for b.Loop() {
					batch.Reset()
					p.Subscribe(&batch, topics, next, 0)
				}
				b.ReportMetric(float64(len(batch.Messages)), "frames")
			})
		}
	}
}

// BenchmarkResubscribeCycle is the full resubscribe cycle of n topics
// (Ethereal SDK: 10 / 50 / 100 in 3.76 / 18.5 / 37.0 µs plus one network
// round trip per subscription): encode the batch from the cached topics,
// write it over a real loopback WebSocket to exchangetest and read until
// every request is acknowledged. wsfan needs one round trip for the whole
// set (Thalex: one public/subscribe request with every channel, one
// response), so the time is the in-memory part plus one round trip, with
// the server's work included. (Subscribing again to a Thalex channel is a
// no-op on the server, so every iteration does the same work.)
func BenchmarkResubscribeCycle(b *testing.B) {
	for _, d := range []exchangetest.Dialect{thalex.Name} {
		p, _ := protocol.ByName(d.String())
		for _, n := range []int{10, 50, 100} {
			b.Run(fmt.Sprintf("dialect=%s/topics=%d", d, n), func(b *testing.B) {
				srv := exchangetest.NewServer(d)
				b.Cleanup(srv.Close)
				ws := dialGorilla(b, srv)
				topics := newTopics(b, p, topicNames(p, n))
				var (
					id    uint64
					next  = func() uint64 { id++; return id }
					batch protocol.Batch
					f     protocol.Frame
				)
				lat := NewLatencies(b.N)
				b.ReportAllocs()
				for b.Loop() {
					start := nowMono()
					batch.Reset()
					p.Subscribe(&batch, topics, next, 0)
					for _, m := range batch.Messages {
						if err := ws.WriteMessage(websocket.TextMessage, m); err != nil {
							b.Fatal(err)
						}
					}
					acked := 0
					for acked < len(batch.Requests) {
						_, msg, err := ws.ReadMessage()
						if err != nil {
							b.Fatal(err)
						}
						acked += countAcks(b, p, msg, &f)
					}
					lat.Add(sinceMono(start))
					if lat.Len()%1024 == 0 {
						srv.ResetReceived() // bound the server's record
					}
				}
				b.ReportMetric(float64(len(batch.Messages)), "frames")
				lat.Report(b)
			})
		}
	}
}

// countAcks returns how many successful responses msg carries.
func countAcks(b *testing.B, p protocol.Protocol, msg []byte, f *protocol.Frame) int {
	if err := p.Classify(msg, f); err != nil {
		b.Fatalf("%v: %s", err, msg)
	}
	switch f.Kind {
	case protocol.KindResponse:
		if f.Error != nil {
			b.Fatalf("refused: %s", msg)
		}
		return 1
	case protocol.KindBatch:
		n := 0
		var elem protocol.Frame
		_ = protocol.EachElement(msg, func(e []byte) bool {
			if p.Classify(e, &elem) == nil && elem.Kind == protocol.KindResponse && elem.Error == nil {
				n++
			}
			return true
		})
		return n
	}
	return 0
}
