package book

// SetForBenchmark sets one bid level under the book's lock: the cost of
// a level change alone, without reading JSON.
func (b *Book) SetForBenchmark(l Level) {
	b.mu.Lock()
	b.bids.set(l)
	b.mu.Unlock()
}
