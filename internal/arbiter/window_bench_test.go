package arbiter

import "testing"

// BenchmarkWindowAdd is a standby merge's use of its window: each
// identity new (a hash), sent by one source and then by the other, the
// oldest forgotten once the window is full (1,024, standby.Window).
// ns/op is one identity's two sendings.
func BenchmarkWindowAdd(b *testing.B) {
	w := NewWindow(1024)
	b.ReportAllocs()
	for i := range b.N {
		id := uint64(i) * 0x9e3779b97f4a7c15 // spread as a hash is
		w.Add(id, 0).Delivered = 1
		w.Add(id, 1)
	}
}
