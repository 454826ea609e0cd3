package exchangetest

import (
	"slices"
	"sync"
	"time"
)

// FeedOptions configures StartFeed.
type FeedOptions struct {
	// Instruments to publish. Default: "BTC-PERPETUAL" and "ETH-PERPETUAL"
	// ("BTCUSD" and "ETHUSD" for Ethereal). Ethereum ignores it.
	Instruments []string
	// Interval between two rounds of notifications. Default: 100ms.
	Interval time.Duration
}

func (o FeedOptions) withDefaults(d Dialect) FeedOptions {
	if len(o.Instruments) == 0 {
		if d == Ethereal {
			o.Instruments = []string{"BTCUSD", "ETHUSD"}
		} else {
			o.Instruments = []string{"BTC-PERPETUAL", "ETH-PERPETUAL"}
		}
	}
	o.Instruments = slices.Clone(o.Instruments)
	if o.Interval <= 0 {
		o.Interval = 100 * time.Millisecond
	}
	return o
}

// feedCtl owns the feed goroutine. The zero value is ready to use.
type feedCtl struct {
	mu   sync.Mutex
	opts FeedOptions   // the running feed's options, or the last ones
	set  bool          // opts was set by StartFeed
	stop chan struct{} // closed by StopFeed; nil when no feed runs
	done chan struct{} // closed by the feed goroutine when it ends
}

// feedTopic is one topic the feed publishes.
type feedTopic struct {
	topic string
	inst  string
	kind  feedKind
}

type feedKind int

const (
	kindTicker feedKind = iota // Thalex/Deribit ticker, Ethereal MarketPrice
	kindBook                   // order book, Ethereal L2Book
	kindHeads                  // Ethereum newHeads
)

// StartFeed starts a goroutine that publishes a realistic feed for the
// server's dialect (see FeedTopics) every opts.Interval until StopFeed or
// Close, replacing a running feed. It does nothing after Close. Only topics with subscribers are
// published, so an idle feed costs little.
func (s *Server) StartFeed(opts FeedOptions) {
	s.StopFeed()
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return
	}
	opts = opts.withDefaults(s.dialect)
	stop, done := make(chan struct{}), make(chan struct{})
	s.fd.mu.Lock()
	s.fd.opts, s.fd.set = opts, true
	s.fd.stop, s.fd.done = stop, done
	s.fd.mu.Unlock()
	topics := feedTopics(s.dialect, opts.Instruments)
	go s.runFeed(topics, opts.Interval, stop, done)
}

// StopFeed stops the feed and waits for its goroutine. It does nothing when
// no feed runs.
func (s *Server) StopFeed() {
	s.fd.mu.Lock()
	stop, done := s.fd.stop, s.fd.done
	s.fd.stop, s.fd.done = nil, nil
	s.fd.mu.Unlock()
	if stop != nil {
		close(stop)
		<-done
	}
}

// FeedTopics returns the topics the feed publishes for the server's dialect
// and the instruments of the running (or last) feed, or the default
// instruments before StartFeed:
//
//	Thalex    ticker.<INST>.raw, book.<INST>.none.10.100ms
//	Deribit   ticker.<INST>.100ms, book.<INST>.100ms
//	Ethereum  newHeads
//	Ethereal  MarketPrice:<SYM>, L2Book:<SYM>
func (s *Server) FeedTopics() []string {
	s.fd.mu.Lock()
	opts := s.fd.opts
	if !s.fd.set {
		opts = FeedOptions{}.withDefaults(s.dialect)
	}
	s.fd.mu.Unlock()
	return FeedTopicsOf(s.dialect, opts)
}

// FeedTopicsOf returns the topics a feed with opts publishes in dialect
// d, as Server.FeedTopics does, before any server exists: a server that
// knows only these (WithTopics) refuses every other topic.
func FeedTopicsOf(d Dialect, opts FeedOptions) []string {
	fts := feedTopics(d, opts.withDefaults(d).Instruments)
	out := make([]string, len(fts))
	for i, ft := range fts {
		out[i] = ft.topic
	}
	return out
}

func feedTopics(d Dialect, insts []string) []feedTopic {
	if d == Ethereum {
		return []feedTopic{{topic: "newHeads", kind: kindHeads}}
	}
	var out []feedTopic
	for _, inst := range insts {
		var ticker, book string
		switch d {
		case Thalex:
			ticker, book = "ticker."+inst+".raw", "book."+inst+".none.10.100ms"
		case Deribit:
			ticker, book = "ticker."+inst+".100ms", "book."+inst+".100ms"
		case Ethereal:
			ticker, book = "MarketPrice:"+inst, "L2Book:"+inst
		}
		out = append(out,
			feedTopic{topic: ticker, inst: inst, kind: kindTicker},
			feedTopic{topic: book, inst: inst, kind: kindBook})
	}
	return out
}

// runFeed is the feed goroutine. It owns gen.
func (s *Server) runFeed(topics []feedTopic, interval time.Duration, stop, done chan struct{}) {
	defer close(done)
	gen := newFeedGen(s.dialect)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		gen.tick()
		for _, ft := range topics {
			if s.Subscribers(ft.topic) == 0 {
				continue
			}
			s.publish(ft.topic, gen.payload(ft), stop)
		}
	}
}
