package client

import "sync"

// eventRelay gathers the events of several connections (a Pool's, a
// Standby's legs) into one channel, each marked with its connection's
// index, dropping the oldest when the channel is full, as a Client does.
type eventRelay struct {
	ch   chan Event
	mu   sync.Mutex // serializes the drop-oldest send on ch, and closing it
	done bool       // ch is closed; mu protects it
}

func newEventRelay(buffer int) *eventRelay {
	return &eventRelay{ch: make(chan Event, max(buffer, 1))}
}

// relay copies connection i's events until the connection closes them,
// calling seen (when set) on each first. It runs on a goroutine of its
// own, one a connection.
func (r *eventRelay) relay(c *Client, i int, seen func(Event)) {
	for ev := range c.Events() {
		ev.Connection = i
		if seen != nil {
			seen(ev)
		}
		r.emit(ev)
	}
}

// emit sends ev without blocking; after close it is dropped.
func (r *eventRelay) emit(ev Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.done {
		sendDropOldest(r.ch, ev)
	}
}

// close closes the channel, once every relay has returned.
func (r *eventRelay) close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.done {
		r.done = true
		close(r.ch)
	}
}
