// Package pending is the table of a connection's requests waiting for
// their answers: ids registered before a request is written, taken by
// the reader when the answer comes, by id or (for a server that answers
// without ids, in order) the oldest first, removed by a caller that gives
// up, failed all at once when the connection dies. It knows nothing of
// the client that owns it: a Call is a channel to wake, or an Answerer
// to hand the answer frame.
package pending

import (
	"sync"

	"github.com/wsfan/wsfan/pkg/protocol"
)

// Response is what the reader hands a waiting call: the result, or the
// error it was answered (or failed) with.
type Response struct {
	Result []byte
	Err    error
}

// Call is one request waiting for its response. It is registered
// before the request is written and removed by exactly one of: the reader
// (response arrived), the caller (context done, or the request could not
// be queued), or the connection's failure.
type Call struct {
	Done chan Response // a call's: capacity 1, the reader never blocks on it
	To   Answerer      // a request answered in place (subscribe, unsubscribe)
	// With neither, nobody waits (a heartbeat reply): the response is
	// dropped.

	// owed marks a request given up on whose answer is still due from a
	// server that answers without ids, in order (see Table.Abandon):
	// the answer takes this place and is dropped, instead of being taken
	// for the next request's.
	owed bool
}

// Answerer takes the answer to a request that is not a call: the
// response frame from the reader goroutine (err nil), or the error that
// ended its wait (f nil) from whoever gave up on it. It must not block.
type Answerer interface {
	Answer(f *protocol.Frame, err error)
}

// Fail answers p with err.
func (p *Call) Fail(err error) {
	switch {
	case p.To != nil:
		p.To.Answer(nil, err)
	case p.Done != nil:
		p.Done <- Response{Err: err}
	}
}

// pool recycles the Calls of Get. A call returns its entry
// only once nobody can send on Done any more: it received the response,
// or removed the id itself before the reader took it.
var pool = sync.Pool{New: func() any { return &Call{Done: make(chan Response, 1)} }}

// Get returns a Call with a Done channel, from the pool.
func Get() *Call { return pool.Get().(*Call) }

// Put gives p back to the pool, once nobody can send on its Done.
func Put(p *Call) { pool.Put(p) }

// Owed reports whether p is the place of an answer given up on (Abandon).
func (p *Call) Owed() bool { return p.owed }

// Table maps request ids to their calls, for one connection. Any
// goroutine may use it.
type Table struct {
	mu    sync.Mutex // protects calls, order and failed
	calls map[uint64]*Call
	// order finds the oldest call for answers without an id (TakeOldest).
	// It is built by the first such answer, so a dialect whose answers
	// all carry ids never pays for it.
	order *idHeap
	// failed is set when the connection died: registering fails at once.
	failed error
}

// NewTable returns an empty table.
func NewTable() *Table {
	return &Table{calls: make(map[uint64]*Call)}
}

// Add registers p under id, or returns the connection's failure.
func (t *Table) Add(id uint64, p *Call) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.failed != nil {
		return t.failed
	}
	t.calls[id] = p
	t.track(id)
	return nil
}

// track adds id to order, when order is kept. Called with mu held.
func (t *Table) track(id uint64) {
	if t.order == nil {
		return
	}
	t.order.push(id)
	// Ids answered by id stay in order until they reach its top: drop
	// them once they outnumber the registered ones, so order stays
	// proportional to the table (amortized O(1) an add).
	if n := len(t.order.ids); n > 64 && n > 2*len(t.calls) {
		t.order.keep(func(id uint64) bool { _, ok := t.calls[id]; return ok })
	}
}

// AddAll registers calls[i] under ids[i], all under one lock, or none of
// them when the connection has failed.
func (t *Table) AddAll(ids []uint64, calls []*Call) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.failed != nil {
		return t.failed
	}
	for i, id := range ids {
		t.calls[id] = calls[i]
		t.track(id)
	}
	return nil
}

// RemoveAll unregisters ids under one lock.
func (t *Table) RemoveAll(ids []uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, id := range ids {
		delete(t.calls, id)
	}
}

// PartAnswerer is an Answerer whose request is answered in parts, one
// for each of its topics (protocol.TopicAcking: OKX).
type PartAnswerer interface {
	// Part records the answer f gives one part and reports whether
	// every part is answered now. It is called with the table's lock
	// held, so that a waiter giving up (Remove) cannot come between two
	// parts: it must not block.
	Part(f *protocol.Frame) bool
}

// TakeAnswered is Take for a response frame f: the call registered
// under id is removed and returned once f answers it whole. A request
// answered in parts (PartAnswerer) records f and stays registered until
// its last part: p is then nil and found true.
func (t *Table) TakeAnswered(id uint64, f *protocol.Frame) (p *Call, found bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	p = t.calls[id]
	if p == nil {
		return nil, false
	}
	if pa, ok := p.To.(PartAnswerer); ok && !pa.Part(f) {
		return nil, true
	}
	delete(t.calls, id)
	return p, true
}

// Take removes and returns the call registered under id.
func (t *Table) Take(id uint64) *Call {
	t.mu.Lock()
	p := t.calls[id]
	if p != nil {
		delete(t.calls, id)
	}
	t.mu.Unlock()
	return p
}

// TakeOldest removes and returns the waiting or owed call with the
// smallest id, skipping entries nobody waits for (heartbeat replies); nil
// when there is none. O(log n): a restore of n topics on a dialect that
// answers in order without ids (Ethereal) is n of these.
func (t *Table) TakeOldest() (uint64, *Call) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.order == nil {
		t.order = &idHeap{ids: make([]uint64, 0, len(t.calls))}
		for id := range t.calls {
			t.order.push(id)
		}
	}
	for len(t.order.ids) > 0 {
		id := t.order.pop()
		p, ok := t.calls[id]
		if ok && (p.To != nil || p.Done != nil || p.owed) {
			delete(t.calls, id)
			return id, p
		}
		// Taken by id meanwhile, or nobody waits for its answer (it
		// stays registered, so that answer is dropped as expected).
	}
	return 0, nil
}

// TakeWaitingIfMany removes and returns every call with a waiter when
// there are two or more, and nothing otherwise.
func (t *Table) TakeWaitingIfMany() []*Call {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, p := range t.calls {
		if p.To != nil || p.Done != nil {
			n++
		}
	}
	if n < 2 {
		return nil
	}
	taken := make([]*Call, 0, n)
	for id, p := range t.calls {
		if p.To != nil || p.Done != nil {
			taken = append(taken, p)
			delete(t.calls, id)
		}
	}
	return taken
}

// DropOwed lets go of the places kept for owed answers (Abandon): the
// server turned out to answer only refusals.
func (t *Table) DropOwed() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for id, p := range t.calls {
		if p.owed {
			delete(t.calls, id)
		}
	}
}

// Abandon gives up on id while keeping its place: its answer, still
// owed, will take the place and be dropped. It reports whether id was
// registered (false: the reader took it, its answer is on the way).
func (t *Table) Abandon(id uint64) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	p, ok := t.calls[id]
	if !ok {
		return false
	}
	t.calls[id] = &Call{owed: true}
	if p.To == nil && p.Done == nil && !p.owed { // TakeOldest may have passed it by
		t.track(id)
	}
	return true
}

// Remove drops id if it is still registered; false means the reader (or a
// failure) took it and its response is on the way.
func (t *Table) Remove(id uint64) bool {
	t.mu.Lock()
	_, ok := t.calls[id]
	delete(t.calls, id)
	t.mu.Unlock()
	return ok
}

// Len is the number of ids registered.
func (t *Table) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.calls)
}

// FailAll fails every call with err, outside the lock, and makes later
// registrations fail too.
func (t *Table) FailAll(err error) {
	t.mu.Lock()
	calls := t.calls
	t.calls = make(map[uint64]*Call)
	t.order = nil
	if t.failed == nil {
		t.failed = err
	}
	t.mu.Unlock()
	for _, p := range calls {
		p.Fail(err)
	}
}

// idHeap is a min-heap of request ids. Ids mostly arrive in increasing
// order, so a push rarely moves anything.
type idHeap struct{ ids []uint64 }

func (h *idHeap) push(id uint64) {
	h.ids = append(h.ids, id)
	for i := len(h.ids) - 1; i > 0; {
		parent := (i - 1) / 2
		if h.ids[parent] <= h.ids[i] {
			break
		}
		h.ids[parent], h.ids[i] = h.ids[i], h.ids[parent]
		i = parent
	}
}

// pop removes and returns the smallest id; the heap must not be empty.
func (h *idHeap) pop() uint64 {
	top := h.ids[0]
	last := len(h.ids) - 1
	h.ids[0] = h.ids[last]
	h.ids = h.ids[:last]
	h.down(0)
	return top
}

func (h *idHeap) down(i int) {
	n := len(h.ids)
	for {
		small := i
		if l := 2*i + 1; l < n && h.ids[l] < h.ids[small] {
			small = l
		}
		if r := 2*i + 2; r < n && h.ids[r] < h.ids[small] {
			small = r
		}
		if small == i {
			return
		}
		h.ids[i], h.ids[small] = h.ids[small], h.ids[i]
		i = small
	}
}

// keep drops the ids keep rejects and restores the heap order.
func (h *idHeap) keep(keep func(uint64) bool) {
	kept := h.ids[:0]
	for _, id := range h.ids {
		if keep(id) {
			kept = append(kept, id)
		}
	}
	h.ids = kept
	for i := len(h.ids)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}
