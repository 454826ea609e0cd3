package client

import (
	"sync"

	"github.com/wsfan/wsfan/pkg/protocol"
)

// response is what the reader hands a waiting call.
type response struct {
	result []byte
	err    error
}

// pendingCall is one request waiting for its response. It is registered
// before the request is written and removed by exactly one of: the reader
// (response arrived), the caller (context done, or the request could not
// be queued), or the connection's failure.
type pendingCall struct {
	done chan response // a call's: capacity 1, the reader never blocks on it
	to   answerer      // a request answered in place (subscribe, unsubscribe)
	// With neither, nobody waits (a heartbeat reply): the response is
	// dropped.

	// owed marks a request given up on whose answer is still due from a
	// server that answers without ids, in order (see pendingTable.abandon):
	// the answer takes this place and is dropped, instead of being taken
	// for the next request's.
	owed bool
}

// answerer takes the answer to a request that is not a call: the
// response frame from the reader goroutine (err nil), or the error that
// ended its wait (f nil) from whoever gave up on it. It must not block.
type answerer interface {
	answer(f *protocol.Frame, err error)
}

// fail answers p with err.
func (p *pendingCall) fail(err error) {
	switch {
	case p.to != nil:
		p.to.answer(nil, err)
	case p.done != nil:
		p.done <- response{err: err}
	}
}

// pendingPool recycles the pendingCall of Call. A call returns its entry
// only once nobody can send on done any more: it received the response,
// or removed the id itself before the reader took it.
var pendingPool = sync.Pool{New: func() any { return &pendingCall{done: make(chan response, 1)} }}

func getPendingCall() *pendingCall { return pendingPool.Get().(*pendingCall) }

func putPendingCall(p *pendingCall) { pendingPool.Put(p) }

// pendingTable maps request ids to their calls, for one connection.
type pendingTable struct {
	mu    sync.Mutex // protects calls and failed
	calls map[uint64]*pendingCall
	// failed is set when the connection died: registering fails at once.
	failed error
}

func newPendingTable() *pendingTable {
	return &pendingTable{calls: make(map[uint64]*pendingCall)}
}

// add registers p under id, or returns the connection's failure.
func (t *pendingTable) add(id uint64, p *pendingCall) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.failed != nil {
		return t.failed
	}
	t.calls[id] = p
	return nil
}

// addAll registers calls[i] under ids[i], all under one lock, or none of
// them when the connection has failed.
func (t *pendingTable) addAll(ids []uint64, calls []*pendingCall) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.failed != nil {
		return t.failed
	}
	for i, id := range ids {
		t.calls[id] = calls[i]
	}
	return nil
}

// removeAll unregisters ids under one lock.
func (t *pendingTable) removeAll(ids []uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, id := range ids {
		delete(t.calls, id)
	}
}

// take removes and returns the call registered under id.
func (t *pendingTable) take(id uint64) *pendingCall {
	t.mu.Lock()
	p := t.calls[id]
	if p != nil {
		delete(t.calls, id)
	}
	t.mu.Unlock()
	return p
}

// takeOldest removes and returns the waiting or owed call with the
// smallest id, skipping entries nobody waits for (heartbeat replies); nil
// when there is none. It scans the table: it serves answers without an
// id, which a connection has few of at once.
func (t *pendingTable) takeOldest() (uint64, *pendingCall) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var oldest uint64
	var found *pendingCall
	for id, p := range t.calls {
		if (p.to != nil || p.done != nil || p.owed) && (found == nil || id < oldest) {
			oldest, found = id, p
		}
	}
	if found != nil {
		delete(t.calls, oldest)
	}
	return oldest, found
}

// takeWaitingIfMany removes and returns every call with a waiter when
// there are two or more, and nothing otherwise.
func (t *pendingTable) takeWaitingIfMany() []*pendingCall {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, p := range t.calls {
		if p.to != nil || p.done != nil {
			n++
		}
	}
	if n < 2 {
		return nil
	}
	taken := make([]*pendingCall, 0, n)
	for id, p := range t.calls {
		if p.to != nil || p.done != nil {
			taken = append(taken, p)
			delete(t.calls, id)
		}
	}
	return taken
}

// dropOwed lets go of the places kept for owed answers (abandon): the
// server turned out to answer only refusals.
func (t *pendingTable) dropOwed() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for id, p := range t.calls {
		if p.owed {
			delete(t.calls, id)
		}
	}
}

// abandon gives up on id while keeping its place: its answer, still
// owed, will take the place and be dropped. It reports whether id was
// registered (false: the reader took it, its answer is on the way).
func (t *pendingTable) abandon(id uint64) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.calls[id]; !ok {
		return false
	}
	t.calls[id] = &pendingCall{owed: true}
	return true
}

// remove drops id if it is still registered; false means the reader (or a
// failure) took it and its response is on the way.
func (t *pendingTable) remove(id uint64) bool {
	t.mu.Lock()
	_, ok := t.calls[id]
	delete(t.calls, id)
	t.mu.Unlock()
	return ok
}

func (t *pendingTable) len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.calls)
}

// failAll fails every call with err, outside the lock, and makes later
// registrations fail too.
func (t *pendingTable) failAll(err error) {
	t.mu.Lock()
	calls := t.calls
	t.calls = make(map[uint64]*pendingCall)
	if t.failed == nil {
		t.failed = err
	}
	t.mu.Unlock()
	for _, p := range calls {
		p.fail(err)
	}
}
