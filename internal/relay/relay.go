// Package relay gathers the events of several connections (a pool's, a
// standby's legs) into one channel, each marked with its connection's
// index, dropping the oldest when the channel is full, as a
// client.Client does with its own.
package relay

import (
	"sync"

	"github.com/wsfan/wsfan/pkg/client"
)

// Relay is one channel of events fed by one goroutine per connection
// (Relay.Relay), closed once by its owner (Close).
type Relay struct {
	ch   chan client.Event
	mu   sync.Mutex // serializes the drop-oldest send on ch, and closing it
	done bool       // ch is closed; mu protects it
}

// New returns a relay whose channel holds buffer events (at least 1).
func New(buffer int) *Relay {
	return &Relay{ch: make(chan client.Event, max(buffer, 1))}
}

// C is the channel the connections' events arrive on; Close closes it.
func (r *Relay) C() <-chan client.Event { return r.ch }

// Relay copies connection i's events until they are closed, calling seen
// (when set) on each first. It runs on a goroutine of its own, one a
// connection.
func (r *Relay) Relay(events <-chan client.Event, i int, seen func(client.Event)) {
	for ev := range events {
		ev.Connection = i
		if seen != nil {
			seen(ev)
		}
		r.emit(ev)
	}
}

// emit sends ev, dropping the oldest queued events while the channel is
// full; after Close it is dropped.
func (r *Relay) emit(ev client.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done {
		return
	}
	for {
		select {
		case r.ch <- ev:
			return
		default:
		}
		select {
		case <-r.ch:
		default:
		}
	}
}

// Close closes the channel, once every Relay call has returned.
func (r *Relay) Close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.done {
		r.done = true
		close(r.ch)
	}
}
