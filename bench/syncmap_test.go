package bench

import (
	"fmt"
	"sync"
	"testing"

	"github.com/wsfan/wsfan/internal/syncx"
)

// routeMap is a routing table: topic → subscription.
type routeMap interface {
	Load(string) (*int, bool)
	Store(string, *int)
	Delete(string)
}

// mutexMap is the alternative to sync.Map: a plain map under a lock, as
// the Thalex SDK's locked map.
type mutexMap struct {
	mu sync.Mutex
	m  map[string]*int
}

func (m *mutexMap) Load(k string) (*int, bool) {
	m.mu.Lock()
	v, ok := m.m[k]
	m.mu.Unlock()
	return v, ok
}

func (m *mutexMap) Store(k string, v *int) {
	m.mu.Lock()
	m.m[k] = v
	m.mu.Unlock()
}

func (m *mutexMap) Delete(k string) {
	m.mu.Lock()
	delete(m.m, k)
	m.mu.Unlock()
}

// rwMap is a map under a reader/writer lock.
type rwMap struct {
	mu sync.RWMutex
	m  map[string]*int
}

func (m *rwMap) Load(k string) (*int, bool) {
	m.mu.RLock()
	v, ok := m.m[k]
	m.mu.RUnlock()
	return v, ok
}

func (m *rwMap) Store(k string, v *int) {
	m.mu.Lock()
	m.m[k] = v
	m.mu.Unlock()
}

func (m *rwMap) Delete(k string) {
	m.mu.Lock()
	delete(m.m, k)
	m.mu.Unlock()
}

// mapImpls are the tables compared. impl=syncmap is syncx.Map, the typed
// sync.Map wsfan's reader routes with.
var mapImpls = []struct {
	name string
	new  func() routeMap
}{
	{"syncmap", func() routeMap { return new(syncx.Map[string, *int]) }},
	{"mutex", func() routeMap { return &mutexMap{m: map[string]*int{}} }},
	{"rwmutex", func() routeMap { return &rwMap{m: map[string]*int{}} }},
}

func mapKeys(n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("ticker.I%d-PERPETUAL.raw", i)
	}
	return keys
}

// BenchmarkMap compares routing tables with the Thalex SDK's workloads
// (locked map). One op is:
//
//	insert-remove/keys=N  store N keys, then delete them (13.4 / 134 µs)
//	read-heavy/keys=N     1,000 lookups over N keys, 1 in 100 a store (43.0 / 43.0 µs)
//	write-heavy/keys=N    N stores over N keys, 1 in 10 ops a lookup (8.2 / 83.8 µs)
//	concurrent/tasks=4    4 goroutines each doing read-heavy over 100 keys (64.3 µs)
func BenchmarkMap(b *testing.B) {
	v := new(int)
	for _, impl := range mapImpls {
		for _, n := range []int{100, 1000} {
			keys := mapKeys(n)
			b.Run(fmt.Sprintf("insert-remove/keys=%d/impl=%s", n, impl.name), func(b *testing.B) {
				m := impl.new()
				b.ReportAllocs()
				for b.Loop() {
					for _, k := range keys {
						m.Store(k, v)
					}
					for _, k := range keys {
						m.Delete(k)
					}
				}
			})
			b.Run(fmt.Sprintf("write-heavy/keys=%d/impl=%s", n, impl.name), func(b *testing.B) {
				m := impl.new()
				b.ReportAllocs()
				for b.Loop() {
					for i, k := range keys {
						if i%10 == 9 {
							m.Load(k)
						} else {
							m.Store(k, v)
						}
					}
				}
			})
		}
		for _, n := range []int{10, 100} {
			keys := mapKeys(n)
			b.Run(fmt.Sprintf("read-heavy/keys=%d/impl=%s", n, impl.name), func(b *testing.B) {
				m := impl.new()
				for _, k := range keys {
					m.Store(k, v)
				}
				b.ReportAllocs()
				for b.Loop() {
					readHeavy(m, keys)
				}
			})
		}
		b.Run("concurrent/tasks=4/impl="+impl.name, func(b *testing.B) {
			keys := mapKeys(100)
			m := impl.new()
			for _, k := range keys {
				m.Store(k, v)
			}
			b.ReportAllocs()
			for b.Loop() {
				var wg sync.WaitGroup
				for range 4 {
					wg.Go(func() { readHeavy(m, keys) })
				}
				wg.Wait()
			}
		})
	}
}

var storedValue int

// readHeavy does 1,000 ops over keys: lookups, with a store every 100th.
func readHeavy(m routeMap, keys []string) {
	v := &storedValue
	for i := range 1000 {
		k := keys[i%len(keys)]
		if i%100 == 99 {
			m.Store(k, v)
		} else if _, ok := m.Load(k); !ok {
			panic("missing key " + k)
		}
	}
}
