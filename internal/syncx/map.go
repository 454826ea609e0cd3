// Package syncx holds small typed wrappers over the sync package.
package syncx

import "sync"

// Map is a sync.Map with typed keys and values. It is built for the
// reader's routing table: written rarely (subscribe, unsubscribe,
// reconnect), read on every frame by one goroutine without locks.
type Map[K comparable, V any] struct {
	m sync.Map
}

// Load returns the value stored for key.
func (m *Map[K, V]) Load(key K) (V, bool) {
	v, ok := m.m.Load(key)
	if !ok {
		var zero V
		return zero, false
	}
	return v.(V), true
}

// Store sets the value for key.
func (m *Map[K, V]) Store(key K, value V) { m.m.Store(key, value) }

// LoadOrStore returns the value of key, when there is one, else stores
// value; loaded says which.
func (m *Map[K, V]) LoadOrStore(key K, value V) (actual V, loaded bool) {
	v, loaded := m.m.LoadOrStore(key, value)
	return v.(V), loaded
}

// CompareAndDelete deletes key only while it still maps to old.
func (m *Map[K, V]) CompareAndDelete(key K, old V) bool { return m.m.CompareAndDelete(key, old) }

// Delete removes key.
func (m *Map[K, V]) Delete(key K) { m.m.Delete(key) }

// Range calls fn for every entry until fn returns false.
func (m *Map[K, V]) Range(fn func(K, V) bool) {
	m.m.Range(func(k, v any) bool { return fn(k.(K), v.(V)) })
}
