package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/wsfan/wsfan/pkg/book"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/record"
)

// recorded is one notification to replay.
type recorded struct {
	at    time.Duration // since the window's first notification
	key   string        // its routing key as recorded
	topic string        // for a dialect of subscription ids (Ethereum): the topic key was the id of; "" otherwise
	frame []byte
	// flags are what the recorded program was told with it
	// (record.Flagged): a gap notice goes before it.
	flags client.Flags
}

// recording is what a replay serves: the notifications of a window, the
// topics subscribed while it was recorded, and the answers of the calls
// recorded with their requests.
type recording struct {
	venue  string
	proto  protocol.Protocol
	notes  []recorded
	topics []string
	calls  map[string][]recordedCall // by method
}

// recordedCall is a call's params and its recorded result.
type recordedCall struct {
	params []byte // compacted
	result json.RawMessage
}

// load reads dir's window into memory.
func load(dir string, w record.Window) (*recording, error) {
	m, err := record.ReadManifest(dir)
	if err != nil {
		return nil, fmt.Errorf("failed to read the recording's manifest: %w", err)
	}
	proto, err := protocol.ByName(m.Venue)
	if err != nil {
		return nil, err
	}
	srvHalf, err := protocol.ServerByName(m.Venue)
	if err != nil {
		return nil, err
	}
	rec := &recording{venue: m.Venue, proto: proto, calls: make(map[string][]recordedCall)}
	seen := map[string]bool{}
	type callKey struct{ client, conn, id uint64 }
	asked := map[callKey]protocol.Incoming{}
	// A dialect of subscription ids (Ethereum): each subscribe's answer
	// names the id its notifications carry on that connection.
	subIDs := srvHalf.SubscriptionID() != ""
	subscribing := map[callKey]string{} // a subscribe's request → its topic
	topicOf := map[string]string{}      // a recorded subscription id → its topic
	var first time.Time
	var f protocol.Frame
	var reqs []protocol.Incoming
	var legs []uint64 // legs[i]: the Client that read notes[i]
	var flagged []record.Record
	_, err = record.Read(dir, record.Window{}, func(r *record.Record) error {
		switch {
		case r.Dir == record.Flagged && w.Holds(r.Time):
			flagged = append(flagged, record.Record{Time: r.Time, Topic: r.Topic, Flags: r.Flags})
		case r.Dir == record.Sent:
			reqs, _, _ = srvHalf.ParseFrame(reqs[:0], r.Frame)
			for _, q := range reqs {
				if q.Op == protocol.OpSubscribe {
					if id, ok := numericID(q.ID); ok && subIDs && len(q.Topics) == 1 {
						subscribing[callKey{r.Client, r.Conn, id}] = q.Topics[0]
					}
					for _, t := range q.Topics {
						if !seen[t] {
							seen[t] = true
							rec.topics = append(rec.topics, t)
						}
					}
				}
				if q.Op == protocol.OpCall && q.Method != "" {
					if id, ok := numericID(q.ID); ok {
						asked[callKey{r.Client, r.Conn, id}] = protocol.Incoming{Method: q.Method, Params: bytes.Clone(q.Params)}
					}
				}
			}
		case r.Kind == protocol.KindNotification && w.Holds(r.Time):
			if first.IsZero() {
				first = r.Time
			}
			rec.notes = append(rec.notes, recorded{at: r.Time.Sub(first), key: r.Topic, topic: topicOf[r.Topic], frame: bytes.Clone(r.Frame)})
			legs = append(legs, r.Client)
		case r.Kind == protocol.KindResponse:
			f.Reset()
			if proto.Classify(r.Frame, &f) != nil || !f.HasID || f.Result == nil {
				return nil
			}
			k := callKey{r.Client, r.Conn, f.ID}
			if topic, ok := subscribing[k]; ok {
				delete(subscribing, k)
				var id string
				if json.Unmarshal(f.Result, &id) == nil {
					topicOf[id] = topic
				}
			}
			if q, ok := asked[k]; ok {
				delete(asked, k)
				rec.calls[q.Method] = append(rec.calls[q.Method], recordedCall{params: compact(q.Params), result: bytes.Clone(f.Result)})
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	rec.flag(flagged, first)
	rec.firstArrivals(legs)
	return rec, nil
}

// flag gives each note the flags of the Flagged records about it: the
// note of the topic received at the record's time (a Flagged record
// names the topic, a note its routing key; the time alone decides when
// the name reads as no key of the dialect's).
func (rec *recording) flag(flagged []record.Record, first time.Time) {
	if len(flagged) == 0 {
		return
	}
	at := make(map[time.Duration][]int, len(flagged))
	for _, r := range flagged {
		at[r.Time.Sub(first)] = nil
	}
	for i, n := range rec.notes {
		if is, ok := at[n.at]; ok {
			at[n.at] = append(is, i)
		}
	}
	for _, r := range flagged {
		is := at[r.Time.Sub(first)]
		if len(is) == 0 {
			continue // its frame was not kept (a private topic), or is outside the window
		}
		key := r.Topic
		if t, err := rec.proto.NewTopic(r.Topic); err == nil {
			key = t.Key
		}
		pick := is[0]
		for _, i := range is {
			if n := rec.notes[i]; n.topic == r.Topic || n.key == key {
				pick = i
				break
			}
		}
		rec.notes[pick].flags |= r.Flags
	}
}

// firstArrivals keeps of the notes only the first arrivals (copies.go):
// a standby's legs each recorded what the program got once. A copy's
// flags go to the note played for it.
func (rec *recording) firstArrivals(legs []uint64) {
	c := copies{topics: make(map[string]*topicCopies)}
	kept := rec.notes[:0]
	at := make([]int, len(rec.notes)) // at[i]: the index in kept of note i when played
	for i, n := range rec.notes {
		topic, idKey := n.key, ""
		if n.topic != "" {
			topic, idKey = n.topic, n.key
		}
		first, played := c.first(i, topic, legs[i], idKey, n.frame)
		if !first {
			kept[at[played]].flags |= n.flags
			continue
		}
		at[i] = len(kept)
		kept = append(kept, n)
	}
	clear(rec.notes[len(kept):])
	rec.notes = kept
}

// numericID reads a request id as the client wrote it: a number, or a
// quoted number (OKX).
func numericID(raw []byte) (uint64, bool) {
	var n json.Number
	if json.Unmarshal(bytes.Trim(raw, `"`), &n) != nil {
		return 0, false
	}
	v, err := n.Int64()
	return uint64(v), err == nil && v >= 0
}

// compact returns params without insignificant space, for comparing.
func compact(params []byte) []byte {
	var b bytes.Buffer
	if json.Compact(&b, params) != nil {
		return bytes.Clone(params)
	}
	return b.Bytes()
}

// serveCalls registers on srv a handler for each recorded method: the
// recorded result of a call with the same params, else an error saying
// the call is not in the recording.
func (rec *recording) serveCalls(srv *exchangetest.Server) {
	for method, calls := range rec.calls {
		srv.Handle(method, func(params json.RawMessage) (any, *protocol.Error) {
			p := compact(params)
			for _, c := range calls {
				if bytes.Equal(c.params, p) {
					return c.result, nil
				}
			}
			return nil, &protocol.Error{Code: protocol.CodeInvalidParams,
				Message: fmt.Sprintf("%s with these params is not in the recording (it holds %d calls of it with other params)", method, len(calls))}
		})
	}
}

// lateJoiners keeps, while a recording plays, a book for each book topic
// it plays (pkg/book, by the venue's rules), so that a program that
// subscribes one after the clock started gets the book as it stands, as
// the sidecar gives its late joiners, and not a stream of changes to a
// book it never saw. mu is held by the playing goroutine while it applies
// and sends a book's frame, and by a subscriber's reader while it takes
// the snapshot, so no change falls between the two.
type lateJoiners struct {
	proto protocol.Protocol
	mu    sync.Mutex
	books map[string]*book.Book // routing key → book; nil entry: not a book
	frame protocol.Frame        // the playing goroutine's, under mu
}

// apply moves the book of n on, if n's topic is a book. Called with mu
// held.
func (l *lateJoiners) apply(venue string, n recorded) {
	b, seen := l.books[n.key]
	if !seen {
		if rules := book.RulesFor(venue, n.key); rules != nil {
			b = book.New(n.key, rules)
		}
		l.books[n.key] = b
	}
	if b == nil {
		return
	}
	l.frame.Reset()
	if l.proto.Classify(n.frame, &l.frame) != nil {
		return
	}
	_ = b.Apply(l.frame.Data, l.frame.Snapshot) // a broken book stays invalid until the recording's next snapshot
}

// snapshot is the payload of topic's book as it stands, or nil (not a
// book, not valid yet). It runs on a subscriber's reader goroutine.
func (l *lateJoiners) snapshot(topic string) []byte {
	t, err := l.proto.NewTopic(topic)
	if err != nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.books[t.Key]
	if b == nil {
		return nil
	}
	payload, ok := b.AppendSnapshot(nil)
	if !ok {
		return nil
	}
	return payload
}

// play sends the notifications through srv from settle after a program
// has subscribed a topic the window has notifications of (not only a
// venue's notice channel, which a client subscribes on connecting): a
// program behind a sidecar is attached a moment after the sidecar's
// subscribe reaches the venue, and would miss the first frames. Paced by their recorded offsets divided by speed (speed 0:
// as fast as the subscribers take them). It returns how many it sent.
func (rec *recording) play(ctx context.Context, srv *exchangetest.Server, speed float64, settle time.Duration) (int, error) {
	keys, topics := make(map[string]bool), make(map[string]bool)
	for _, n := range rec.notes {
		keys[n.key] = true
		topics[n.topic] = true
	}
	played := func(topic string) bool {
		if topics[topic] {
			return true
		}
		t, err := rec.proto.NewTopic(topic)
		return err == nil && keys[t.Key]
	}
	if err := srv.WaitSubscribed(ctx, played); err != nil {
		return 0, err
	}
	select {
	case <-time.After(settle):
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	late := &lateJoiners{proto: rec.proto, books: make(map[string]*book.Book)}
	srv.SetSnapshots(late.snapshot)
	defer srv.SetSnapshots(nil)
	start := time.Now()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for i, n := range rec.notes {
		if speed > 0 {
			if wait := time.Until(start.Add(time.Duration(float64(n.at) / speed))); wait > 0 {
				timer.Reset(wait)
				select {
				case <-timer.C:
				case <-ctx.Done():
					return i, ctx.Err()
				}
			}
		} else if ctx.Err() != nil {
			return i, ctx.Err()
		}
		late.mu.Lock()
		late.apply(rec.venue, n)
		if cause, ok := record.NoticeCause(n.flags); ok {
			srv.PublishGap(n.topic, n.key, cause)
		}
		if n.topic != "" {
			srv.PublishTopicFrame(n.topic, n.key, n.frame)
		} else {
			srv.PublishFrame(n.key, n.frame)
		}
		late.mu.Unlock()
	}
	return len(rec.notes), nil
}
