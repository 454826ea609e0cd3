package client

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/wsfan/wsfan/internal/syncx"
)

// topicTable holds every topic subscribed on the server, and is the one
// place that writes where they are found: by name and as a slice, which
// Client.mu protects (a restore walks the slice, which for 100 topics
// costs a fraction of iterating a map; order is not kept, removal swaps in
// the last entry, and servers do not care in which order topics are
// restored), and by routing key (routes), which the reader goroutine
// reads on every frame without locking. The zero value is ready to use.
type topicTable struct {
	byName map[string]*topicState
	list   []*topicState

	// routes maps a routing key to its topic: the topic's name where the
	// dialect routes by name, else the key the server assigned (an
	// Ethereum subscription id). Written under Client.mu, but for
	// routeServerKey, which the reader calls as an acknowledgement
	// arrives, before Client.mu is taken.
	routes syncx.Map[string, *topicState]

	// left remembers the routing keys of the last topics removed, so the
	// frames a server still sends before it reads the unsubscribe are
	// dropped quietly (counted, not logged as if something were wrong).
	left recentKeys
}

func (t *topicTable) get(name string) *topicState { return t.byName[name] }

func (t *topicTable) len() int { return len(t.list) }

// all is every topic; the slice is the table's own, valid until the next
// add or remove.
func (t *topicTable) all() []*topicState { return t.list }

// add puts ts in the table, routable at once when its key is known before
// the server answers (a name).
func (t *topicTable) add(ts *topicState) {
	if t.byName == nil {
		t.byName = make(map[string]*topicState)
	}
	ts.index = len(t.list)
	t.list = append(t.list, ts)
	t.byName[ts.name] = ts
	if ts.key != "" {
		t.routes.Store(ts.key, ts)
	}
}

// remove drops ts, which must be in the table (topicState.removed says
// whether it still is), and its route.
func (t *topicTable) remove(ts *topicState) {
	last := len(t.list) - 1
	moved := t.list[last]
	t.list[ts.index] = moved
	moved.index = ts.index
	t.list[last] = nil
	t.list = t.list[:last]
	delete(t.byName, ts.name)
	t.unroute(ts)
	if ts.key != "" {
		t.left.add(ts.key, time.Now())
	}
}

// justLeft reports whether key routed a topic removed moments before now.
// Safe on any goroutine; the reader asks only about frames it cannot
// route, and pays a lock only within leftQuiet of a removal.
func (t *topicTable) justLeft(key string, now time.Time) bool { return t.left.has(key, now) }

// recentKeys is a small ring of keys and when they were added, for
// justLeft. Its own lock: the reader asks without Client.mu.
type recentKeys struct {
	newest atomic.Int64 // unix ns of the last add: has needs no lock long after it

	mu   sync.Mutex
	keys [recentLeft]string
	at   [recentLeft]time.Time
	next int
}

// recentLeft is how many removed keys are remembered, and leftQuiet for
// how long: a server reads an unsubscribe within a round trip.
const (
	recentLeft = 64
	leftQuiet  = 10 * time.Second
)

func (r *recentKeys) add(key string, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.keys[r.next], r.at[r.next] = key, now
	r.next = (r.next + 1) % recentLeft
	r.newest.Store(now.UnixNano())
}

func (r *recentKeys) has(key string, now time.Time) bool {
	if now.UnixNano()-r.newest.Load() >= int64(leftQuiet) {
		return false // nothing left lately: the common case, lock-free
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, k := range r.keys {
		if k == key && now.Sub(r.at[i]) < leftQuiet {
			return true
		}
	}
	return false
}

// route finds the topic of a routing key. Safe on any goroutine.
func (t *topicTable) route(key string) (*topicState, bool) { return t.routes.Load(key) }

// eachRoute calls fn for every routed topic until fn returns false. Safe
// on any goroutine.
func (t *topicTable) eachRoute(fn func(key string, ts *topicState) bool) { t.routes.Range(fn) }

// routeServerKey makes ts routable by key, the key the server assigned
// in its acknowledgement, before the next frame is read. Called on the
// reader goroutine; ts.key follows under Client.mu (settleLocked).
func (t *topicTable) routeServerKey(key string, ts *topicState) { t.routes.Store(key, ts) }

// routeServerKeyBeside is routeServerKey while another connection's keys
// route too (handover.go): false, and nothing changed, when key routes
// to another topic already (two servers that number subscriptions from
// 0x1).
func (t *topicTable) routeServerKeyBeside(key string, ts *topicState) bool {
	actual, loaded := t.routes.LoadOrStore(key, ts)
	return !loaded || actual == ts
}

// unroute removes ts's route, if it is still ts's.
func (t *topicTable) unroute(ts *topicState) {
	if ts.key != "" {
		t.routes.CompareAndDelete(ts.key, ts)
	}
}

// dropRouteOf drops the route of key to ts, a key a server assigned on
// a connection left behind; a route of key to another topic stays.
func (t *topicTable) dropRouteOf(key string, ts *topicState) { t.routes.CompareAndDelete(key, ts) }

// forgetServerKey drops a key the server assigned on a connection that
// has ended: the next connection assigns another. A topic routed by name
// keeps its route.
func (t *topicTable) forgetServerKey(ts *topicState) {
	if ts.topic.Key == "" && ts.key != "" {
		t.routes.CompareAndDelete(ts.key, ts)
		ts.key = ""
	}
}
