package exchangetest

import (
	"slices"
	"sync"
	"time"

	"github.com/wsfan/wsfan/pkg/venue"
)

// FeedOptions configures StartFeed.
type FeedOptions struct {
	// Instruments to publish. Default: the exchange feed's
	// (venue.Simulation.Instruments), such as BTC-PERPETUAL and
	// ETH-PERPETUAL. A node's feed ignores it.
	Instruments []string
	// Interval between two rounds of notifications. Default: 100ms.
	Interval time.Duration
}

// feedSeed starts every feed's random walk: the same feed every run.
const feedSeed = 0x5eed

func (o FeedOptions) withDefaults(f venue.Simulation) FeedOptions {
	if len(o.Instruments) == 0 {
		o.Instruments = f.Instruments()
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

// StartFeed starts a goroutine that publishes the exchange's made-up
// market data (its venue.Exchange.Feed; see FeedTopics) every
// opts.Interval until StopFeed or Close, replacing a running feed. It does
// nothing after Close, or when the exchange has no feed. Only topics with
// subscribers are published, so an idle feed costs little.
func (s *Server) StartFeed(opts FeedOptions) {
	s.StopFeed()
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed || s.ex.Feed == nil {
		return
	}
	feed := s.ex.Feed(feedSeed)
	opts = opts.withDefaults(feed)
	stop, done := make(chan struct{}), make(chan struct{})
	s.fd.mu.Lock()
	s.fd.opts, s.fd.set = opts, true
	s.fd.stop, s.fd.done = stop, done
	s.fd.mu.Unlock()
	topics := feed.Topics(opts.Instruments)
	s.lv.start(feed, topics)
	go s.runFeed(feed, topics, opts.Interval, stop, done)
}

// StopFeed stops the feed and waits for its goroutine. It does nothing when
// no feed runs. The books stand still and a new subscriber still gets
// their snapshot, as an exchange's quiet book would give it.
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

// FeedTopics returns the topics the feed publishes for the running (or
// last) feed's instruments, or the default instruments before StartFeed;
// none when the exchange has no feed. Thalex's, for example, are
// ticker.<INST>.raw and book.<INST>.none.10.100ms.
func (s *Server) FeedTopics() []string {
	s.fd.mu.Lock()
	opts, set := s.fd.opts, s.fd.set
	s.fd.mu.Unlock()
	if !set {
		opts = FeedOptions{}
	}
	return FeedTopicsOf(s.dialect, opts)
}

// FeedTopicsOf returns the topics a feed with opts publishes in dialect
// d, as Server.FeedTopics does, before any server exists: a server that
// knows only these (WithTopics) refuses every other topic.
func FeedTopicsOf(d Dialect, opts FeedOptions) []string {
	ex := venue.ByName(string(d))
	if ex.Feed == nil {
		return nil
	}
	feed := ex.Feed(feedSeed)
	var out []string
	for _, ft := range feed.Topics(opts.withDefaults(feed).Instruments) {
		out = append(out, ft.Topic)
	}
	return out
}

// FeedInstruments are the running (or last) feed's instruments, or the
// exchange feed's default ones: what the exchange's public methods
// (venue.Exchange.Methods) list.
func (s *Server) FeedInstruments() []string {
	s.fd.mu.Lock()
	opts, set := s.fd.opts, s.fd.set
	s.fd.mu.Unlock()
	if set || s.ex.Feed == nil {
		return opts.Instruments
	}
	return s.ex.Feed(feedSeed).Instruments()
}

// runFeed is the feed goroutine. It uses feed under s.lv.mu, where a
// new subscriber of a book takes its snapshot, so the subscriber's first
// change is the one after its snapshot; it queues the round's messages
// after letting go of the lock.
func (s *Server) runFeed(feed venue.Simulation, topics []venue.FeedTopic, interval time.Duration, stop, done chan struct{}) {
	defer close(done)
	t := time.NewTicker(interval)
	defer t.Stop()
	var round []delivery
	for {
		select {
		case <-stop:
			return
		case now := <-t.C:
			round = s.lv.round(s, feed, topics, now, round[:0])
		}
		for i, d := range round {
			s.deliver(d.topic, d.data, d.targets, stop)
			round[i] = delivery{}
		}
	}
}
