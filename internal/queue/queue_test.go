package queue

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// drain pops every element of q, oldest first.
func drain(q *Queue[int]) []int {
	var out []int
	for {
		v, ok := q.Front()
		if !ok {
			return out
		}
		out = append(out, v)
		q.Pop()
	}
}

func TestQueueIsFIFOAcrossGrowthAndWrap(t *testing.T) {
	var q Queue[int]
	_, ok := q.Front()
	assert.False(t, ok, "the zero Queue is empty")
	next, want := 0, []int(nil)
	// Interleave pushes and pops so the ring wraps before it grows.
	for round := range 10 {
		for range 7 + round {
			q.Push(next)
			want = append(want, next)
			next++
		}
		for range 3 {
			v, ok := q.Front()
			require.True(t, ok)
			require.Equal(t, want[0], v)
			q.Pop()
			want = want[1:]
		}
		require.Equal(t, len(want), q.Len())
	}
	assert.Equal(t, want, drain(&q), "every element once, in the order pushed")
	assert.Zero(t, q.Len())
}

func TestQueueLetsLargeStorageGoOnceEmpty(t *testing.T) {
	var q Queue[*int]
	for i := range 1000 {
		q.Push(&i)
	}
	for range 999 {
		q.Pop()
	}
	assert.NotNil(t, q.buf, "storage kept while an element is queued")
	q.Pop()
	assert.Nil(t, q.buf, "storage beyond 64 elements let go once empty")

	for i := range 10 {
		q.Push(&i)
	}
	small := q.buf
	for range 10 {
		q.Pop()
	}
	assert.Len(t, q.buf, len(small), "a small ring is kept for next time")
	for _, p := range q.buf {
		assert.Nil(t, p, "a popped slot references nothing")
	}
}
