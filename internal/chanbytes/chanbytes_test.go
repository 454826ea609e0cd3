package chanbytes

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCounterRing checks the ring's count against a plain sum over a
// channel filled and drained in random steps, through many wraps.
func TestCounterRing(t *testing.T) {
	const capacity = 7
	ch := make(chan int, capacity)
	p := New(capacity, 1<<30)
	rng := rand.New(rand.NewPCG(1, 2))
	for range 100_000 {
		if rng.IntN(2) == 0 && len(ch) < capacity {
			size := rng.IntN(1000)
			ch <- size
			p.Push(size)
		} else if len(ch) > 0 {
			<-ch
		}
		want := 0
		for range len(ch) { // rotate the channel through to sum it
			v := <-ch
			want += v
			ch <- v
		}
		require.Equal(t, uint64(want), p.Bytes(len(ch)))
	}
}
