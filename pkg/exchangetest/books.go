package exchangetest

import (
	"fmt"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"github.com/wsfan/wsfan/pkg/venue"
)

// liveFeed is the running feed as subscribes see it: a new subscriber of
// a book takes the book's snapshot under mu, where the feed goroutine
// also moves the books on, so the snapshot and the changes after it form
// one chain for every subscriber, as on the exchanges. The zero value is
// ready; no feed runs until start.
type liveFeed struct {
	mu    sync.Mutex
	last  venue.Simulation           // the running feed, or the last one; nil before the first
	feed  venue.StatefulSimulation   // nil when no feed runs or its books are not stateful
	books map[string]venue.FeedTopic // the feed's book topics
	lose  map[string]int             // book topic → changes to lose (LoseBookChanges)
	cross map[string]bool            // book topic → cross the next change (CrossBook)
	// snapshots subscribes a connection to a book topic (its add) and
	// gives the book's snapshot payload, both under the lock its
	// publisher holds, where no running feed holds the book
	// (SetSnapshots: a replay's); nil for none.
	snapshots func(topic string, add func()) []byte
}

// delivery is one message of a feed round and who gets it.
type delivery struct {
	topic   string
	data    []byte
	targets []target
}

// start takes feed's book topics, when its books are stateful.
func (l *liveFeed) start(feed venue.Simulation, topics []venue.FeedTopic) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.feed, l.books, l.lose, l.cross = nil, nil, nil, nil
	l.last = feed
	sf, ok := feed.(venue.StatefulSimulation)
	if !ok {
		return
	}
	l.feed, l.books = sf, make(map[string]venue.FeedTopic)
	for _, ft := range topics {
		if ft.Kind == venue.FeedBook {
			l.books[ft.Topic] = ft
		}
	}
}

// round moves feed on to now and returns the messages of its topics that
// have subscribers, each with its targets, appended to out. It runs on
// the feed goroutine.
func (l *liveFeed) round(s *Server, feed venue.Simulation, topics []venue.FeedTopic, now time.Time, out []delivery) []delivery {
	l.mu.Lock()
	defer l.mu.Unlock()
	feed.Advance(now)
	for _, ft := range topics {
		if s.Subscribers(ft.Topic) == 0 {
			continue
		}
		if l.cross[ft.Topic] {
			delete(l.cross, ft.Topic)
			l.feed.CrossBook(ft)
		}
		data := feed.Payload(ft)
		if l.lose[ft.Topic] > 0 {
			l.lose[ft.Topic]--
			continue // lost on the way: every subscriber misses it
		}
		out = append(out, delivery{topic: ft.Topic, data: data, targets: s.targets(ft.Topic, nil)})
	}
	return out
}

// join subscribes c to topic (id: its Ethereum subscription id) and, when
// topic is a book of the running feed, returns the frame of the book's
// snapshot for c alone: the caller writes it right after the
// acknowledgement.
func (s *Server) join(c *conn, topic, id string) []byte {
	s.lv.mu.Lock()
	defer s.lv.mu.Unlock()
	add := func() { s.addSub(c, topic, id) }
	if ft, ok := s.lv.books[topic]; ok {
		add()
		return s.wire.AppendSnapshotNotification(nil, topic, id, s.lv.feed.Snapshot(ft))
	}
	if payload := s.lv.snapshot(topic, add); payload != nil {
		return s.wire.AppendSnapshotNotification(nil, topic, id, payload)
	}
	return nil
}

// snapshot subscribes by add and returns SetSnapshots' payload for
// topic, or nil. Called with mu held.
func (l *liveFeed) snapshot(topic string, add func()) []byte {
	if l.snapshots == nil {
		add()
		return nil
	}
	return l.snapshots(topic, add)
}

// SetSnapshots has a new subscriber of a topic get, right after its
// acknowledgement, the snapshot whose payload fn returns (nil: none), in
// the venue's snapshot frame: a replay's late joiner gets the book as it
// stands (cmd/replay). fn must call add, which subscribes the
// connection, under the lock it holds while it takes the snapshot and
// its publisher holds while it moves the book on and publishes a change:
// so no change falls between the snapshot and the first change the
// subscriber gets, nor comes before the snapshot. fn runs on the
// subscriber's writer (or reader) goroutine; a book a running feed holds
// is its own.
func (s *Server) SetSnapshots(fn func(topic string, add func()) []byte) {
	s.lv.mu.Lock()
	defer s.lv.mu.Unlock()
	s.lv.snapshots = fn
}

// joinNow is join for a dialect whose answer carries no ids (Ethereal): the
// snapshot is queued at once, under the lock, so no change of the book
// can come before it. It runs on c's reader goroutine.
func (s *Server) joinNow(c *conn, topic string) {
	s.lv.mu.Lock()
	defer s.lv.mu.Unlock()
	add := func() { s.addSub(c, topic, "") }
	var payload []byte
	if ft, ok := s.lv.books[topic]; ok {
		add()
		payload = s.lv.feed.Snapshot(ft)
	} else {
		payload = s.lv.snapshot(topic, add)
	}
	if payload != nil {
		frame := s.wire.AppendSnapshotNotification(nil, topic, "", payload)
		c.send(outMsg{typ: websocket.TextMessage, data: frame}, nil)
	}
}

// LoseBookChanges makes the feed lose the next n changes of the book
// topic, for every subscriber, as a network or the exchange itself may:
// where the exchange chains its changes (Deribit prev_change_id, Ethereal
// pt) the next one shows the gap. It reports an error when topic is not
// a book of the running feed.
func (s *Server) LoseBookChanges(topic string, n int) error {
	s.lv.mu.Lock()
	defer s.lv.mu.Unlock()
	if _, ok := s.lv.books[topic]; !ok {
		return fmt.Errorf("exchangetest: %q is not a book of the running feed", topic)
	}
	if s.lv.lose == nil {
		s.lv.lose = make(map[string]int)
	}
	s.lv.lose[topic] += n
	return nil
}

// CrossBook makes the next change of the book topic cross the book (a bid
// at the best ask), and the change after it uncross it: what no exchange
// leaves standing, for tests of a book's check. It reports an error when
// topic is not a book of the running feed.
func (s *Server) CrossBook(topic string) error {
	s.lv.mu.Lock()
	defer s.lv.mu.Unlock()
	if _, ok := s.lv.books[topic]; !ok {
		return fmt.Errorf("exchangetest: %q is not a book of the running feed", topic)
	}
	if s.lv.cross == nil {
		s.lv.cross = make(map[string]bool)
	}
	s.lv.cross[topic] = true
	return nil
}

// answer answers a method from the feed's state (venue.Exchange
// FeedMethods) under mu, where the feed goroutine moves it on; ok is
// false when m is nil or no feed has run yet.
func (l *liveFeed) answer(m func(venue.Simulation, time.Time) any, now time.Time) (result any, ok bool) {
	if m == nil {
		return nil, false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.last == nil {
		return nil, false
	}
	return m(l.last, now), true
}
