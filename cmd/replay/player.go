package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/wsfan/wsfan/pkg/book"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/record"
)

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
// and sends a frame, and by a subscriber's connection while it is
// subscribed and takes the snapshot, so no change falls between the two
// nor reaches it after a snapshot that holds it (subscribed before the
// lock was taken, a late joiner got the changes played in between after
// its snapshot: TestLateJoinerGetsTheBookAsItStands failed when the
// machine held its goroutine there).
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

// snapshot subscribes a program to topic (add) and returns the payload
// of topic's book as it stands, or nil (not a book, not valid yet), both
// under mu: the program gets the first change the book was not at. It
// runs on the subscriber's connection's goroutine (SetSnapshots).
func (l *lateJoiners) snapshot(topic string, add func()) []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	add()
	t, err := l.proto.NewTopic(topic)
	if err != nil {
		return nil
	}
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
// subscribe reaches the venue, and would miss the first frames. Paced by
// their recorded offsets divided by speed (pace.go; speed 0: as fast as
// the subscribers take them). It returns how many it sent.
func (rec *recording) play(ctx context.Context, srv *exchangetest.Server, speed float64, settle time.Duration) (int, error) {
	played := func(topic string) bool {
		if rec.named[topic] {
			return true
		}
		t, err := rec.proto.NewTopic(topic)
		return err == nil && rec.keys[t.Key]
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
	notes, reuse, stop := rec.stream(ctx)
	var pace *pacer // nil at -speed max
	if speed > 0 {
		pace = newPacer(speed)
	}
	sent := 0
	for batch := range notes {
		for _, n := range batch {
			if pace != nil {
				if err := pace.wait(ctx, n.at); err != nil {
					_ = stop()
					return sent, err
				}
			} else if ctx.Err() != nil {
				_ = stop()
				return sent, ctx.Err()
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
			sent++
		}
		reuse(batch)
	}
	return sent, stop()
}
