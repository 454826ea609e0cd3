package sidecar

import (
	"sort"
	"sync"
)

// registry is the set of live local clients. The transports add a session
// when its client connects and remove it when the session has ended; the
// Server drains and closes them; status and metrics list them.
type registry struct {
	// Set by newRegistry, read only after.
	max   int // Config.MaxClients
	stats *stats

	// mu protects the following.
	mu       sync.Mutex
	sessions map[*session]struct{}
	streams  int // open status and book streams (addStream), counted against max too
	lastID   uint64
	draining bool

	// wg counts the sessions added and not yet removed, and so their
	// goroutines.
	wg sync.WaitGroup
}

func newRegistry(maxClients int, st *stats) *registry {
	return &registry{max: maxClients, stats: st, sessions: make(map[*session]struct{})}
}

// add numbers and registers a new session, or reports why it is refused.
func (r *registry) add(s *session) (closeReason, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if reason, ok := r.admitLocked(); !ok {
		return reason, false
	}
	r.lastID++
	s.id = r.lastID
	r.sessions[s] = struct{}{}
	r.stats.connections.Add(1)
	r.wg.Add(1) // done by remove
	return closeReason{}, true
}

// addStream counts an HTTP stream that is not a session (/v1/status/stream,
// /v1/book/stream) against Config.MaxClients, or reports why it is
// refused; removeStream ends it.
func (r *registry) addStream() (closeReason, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if reason, ok := r.admitLocked(); !ok {
		return reason, false
	}
	r.streams++
	return closeReason{}, true
}

// removeStream ends a stream addStream counted.
func (r *registry) removeStream() {
	r.mu.Lock()
	r.streams--
	r.mu.Unlock()
}

// admitLocked reports whether one more client fits, or why not: the
// Server is draining, or Config.MaxClients is reached. Called with mu
// held.
func (r *registry) admitLocked() (closeReason, bool) {
	if r.draining {
		return reasonShutdown, false
	}
	if len(r.sessions)+r.streams >= r.max {
		r.stats.disconnects(reasonTooManyClients(0).label)
		return reasonTooManyClients(r.max), false
	}
	return closeReason{}, true
}

// remove unregisters a session that has ended.
func (r *registry) remove(s *session) {
	r.mu.Lock()
	delete(r.sessions, s)
	r.mu.Unlock()
	r.wg.Done()
}

// list returns the sessions in the order they were added.
func (r *registry) list() []*session {
	r.mu.Lock()
	out := make([]*session, 0, len(r.sessions))
	for s := range r.sessions {
		out = append(out, s)
	}
	r.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

// len returns how many sessions are registered.
func (r *registry) len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.sessions)
}

// drain refuses new sessions from now on and returns the registered ones.
func (r *registry) drain() []*session {
	r.mu.Lock()
	r.draining = true
	r.mu.Unlock()
	return r.list()
}

// isDraining reports whether drain has been called.
func (r *registry) isDraining() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.draining
}

// wait waits until every session has been removed.
func (r *registry) wait() { r.wg.Wait() }
