// Package queue is a FIFO in a ring that grows on demand and lets its
// storage go once empty: what a subscription buffers beyond its
// channel's slots, so that a subscription costs its channel's few slots
// until its consumer falls behind.
package queue

// Queue is a FIFO of T. The zero Queue is empty and ready. It is not
// safe for concurrent use: its owner locks around it.
type Queue[T any] struct {
	buf  []T
	head int // index of the oldest element
	n    int // elements queued
}

// keep is the most storage an empty queue keeps for next time.
const keep = 64

// Len is the number of elements queued.
func (q *Queue[T]) Len() int { return q.n }

// Push appends v, doubling the ring when it is full.
func (q *Queue[T]) Push(v T) {
	if q.n == len(q.buf) {
		grown := make([]T, max(2*len(q.buf), 16))
		copied := copy(grown, q.buf[q.head:])
		copy(grown[copied:], q.buf[:q.head])
		q.buf, q.head = grown, 0
	}
	q.buf[(q.head+q.n)%len(q.buf)] = v
	q.n++
}

// Front returns the oldest element; ok is false when the queue is empty.
func (q *Queue[T]) Front() (v T, ok bool) {
	if q.n == 0 {
		return v, false
	}
	return q.buf[q.head], true
}

// Pop removes the oldest element; once empty, storage beyond 64
// elements is let go.
func (q *Queue[T]) Pop() {
	var zero T
	q.buf[q.head] = zero // drop what it references
	q.head = (q.head + 1) % len(q.buf)
	q.n--
	if q.n == 0 {
		q.head = 0
		if len(q.buf) > keep {
			q.buf = nil
		}
	}
}
