package main

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/wsfan/wsfan/pkg/client"
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

// each calls fn with each notification of the window to play, in
// recorded order (the first arrivals, copies.go), read from disk as it
// goes; the note is fn's. An error fn returns ends it and is returned.
func (rec *recording) each(fn func(recorded) error) error {
	cp := newCopies(rec.legs)
	var slab []byte // the frames' copies, many to an allocation
	_, err := record.Read(rec.dir, rec.window, func(r *record.Record) error {
		if r.Dir != record.Received || r.Kind != protocol.KindNotification || !rec.window.Holds(r.Time) {
			return nil
		}
		at := r.Time.UnixNano()
		var topic string
		if len(rec.topicOf) > 0 {
			topic = rec.topicOf[r.Topic]
		}
		if _, first := cp.first(at, r.Topic, topic, r.Client, r.Frame); !first {
			return nil
		}
		if cap(slab)-len(slab) < len(r.Frame) {
			slab = make([]byte, 0, max(slabBytes, len(r.Frame)))
		}
		slab = append(slab, r.Frame...)
		n := recorded{at: r.Time.Sub(rec.first), key: r.Topic, topic: topic, frame: slab[len(slab)-len(r.Frame) : len(slab) : len(slab)]}
		if len(rec.flags) > 0 {
			n.flags = rec.flags[noteID{at, r.Topic}]
		}
		return fn(n)
	})
	return err
}

// slabBytes is the size of each allocation each copies frames into; a
// slab is freed once the last of its frames is written to every
// connection.
const slabBytes = 64 << 10

// streamBatch is how many notifications the reading goroutine hands
// the player at once, and streamAhead how many batches it reads ahead of
// it: a replay holds at most (streamAhead+2)·streamBatch notifications.
const (
	streamBatch = 256
	streamAhead = 4
)

// errStopped ends a stream whose player left.
var errStopped = errors.New("the player stopped")

// stream reads the window's notifications (each) on a goroutine of its
// own. It returns the channel of their batches, closed at the end; a
// function taking a batch back once it is played, for the goroutine to
// fill again (a batch is not allocated anew each time); and a function
// that stops the goroutine (if it runs), waits for it and returns why
// the read ended early (nil at the end of the window, or when stopped).
func (rec *recording) stream(ctx context.Context) (<-chan []recorded, func([]recorded), func() error) {
	out := make(chan []recorded, streamAhead)
	free := make(chan []recorded, streamAhead+2)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var err error
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(out)
		next := func() []recorded {
			select {
			case b := <-free:
				return b[:0]
			default:
				return make([]recorded, 0, streamBatch)
			}
		}
		batch := next()
		send := func() error {
			select {
			case out <- batch:
				batch = next()
				return nil
			case <-stop:
				return errStopped
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		err = rec.each(func(n recorded) error {
			batch = append(batch, n)
			if len(batch) < streamBatch {
				return nil
			}
			return send()
		})
		if err == nil && len(batch) > 0 {
			err = send()
		}
	}()
	played := func(b []recorded) {
		select {
		case free <- b:
		default:
		}
	}
	var once sync.Once
	return out, played, func() error {
		once.Do(func() { close(stop) })
		wg.Wait()
		if errors.Is(err, errStopped) {
			return nil
		}
		return err
	}
}
