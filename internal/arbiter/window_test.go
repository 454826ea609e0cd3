package arbiter

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// The window delivers the first arrival of each sending of an identity:
// a second leg's copy is not delivered, an identity one leg sends twice
// is delivered twice, and an identity forgotten (the oldest, once the
// window is full) is delivered again.
func TestWindowCountsEachSourcesSendings(t *testing.T) {
	w := NewWindow(3)
	first := func(id uint64, leg int) bool { // as a standby's merge decides
		s := w.Add(id, leg)
		if s.Sent[leg] <= s.Delivered {
			return false
		}
		s.Delivered = s.Sent[leg]
		return true
	}
	assert.True(t, first(1, 0), "first arrival")
	assert.False(t, first(1, 1), "the other leg's copy")
	assert.True(t, first(1, 1), "the other leg sent it a second time first")
	assert.False(t, first(1, 0), "the first leg's second copy")
	assert.True(t, first(2, 1))
	assert.True(t, first(3, 0))
	assert.True(t, first(4, 0), "the window is full: 1 is forgotten")
	assert.False(t, first(2, 0), "2 is remembered")
	assert.True(t, first(1, 1), "1 was forgotten, so its late copy is delivered again")
	assert.Equal(t, 3, w.index.len())
}

// An identity still in use moves to a new slot with its counts before
// the ring would forget it: a leg's late copy of a payload sent again
// and again is still told from a new sending.
func TestWindowKeepsABusyIdentity(t *testing.T) {
	w := NewWindow(4)
	const busy = 1
	for other := uint64(10); other < 30; other++ {
		s := w.Add(busy, 0) // leg 0 sends the busy payload again
		s.Delivered = s.Sent[0]
		w.Add(other, 0)
	}
	s := w.Slot(busy)
	if assert.NotNil(t, s, "the busy identity is remembered") {
		assert.Equal(t, uint32(20), s.Sent[0])
		assert.Equal(t, uint32(20), s.Delivered, "its counts moved with it")
	}
	assert.Nil(t, w.Slot(10), "an identity not in use is forgotten")
	assert.LessOrEqual(t, w.index.len(), 4)
}
