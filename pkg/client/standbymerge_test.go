package client

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// The window delivers the first arrival of each sending of an identity:
// a second leg's copy is not delivered, an identity one leg sends twice
// is delivered twice, and an identity forgotten (the oldest, once the
// window is full) is delivered again.
func TestIdentityWindowCountsEachLegsSendings(t *testing.T) {
	w := newIdentityWindow(3)
	assert.True(t, w.count(1, 0), "first arrival")
	assert.False(t, w.count(1, 1), "the other leg's copy")
	assert.True(t, w.count(1, 1), "the other leg sent it a second time first")
	assert.False(t, w.count(1, 0), "the first leg's second copy")
	assert.True(t, w.count(2, 1))
	assert.True(t, w.count(3, 0))
	assert.True(t, w.count(4, 0), "the window is full: 1 is forgotten")
	assert.False(t, w.count(2, 0), "2 is remembered")
	assert.True(t, w.count(1, 1), "1 was forgotten, so its late copy is delivered again")
	assert.Len(t, w.index, 3)
}
