package chain

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func h(s string) (out Hash) { copy(out[:], s); return out }

func link(n uint64, hash, parent string) Link {
	return Link{Number: n, Hash: h(hash), Parent: h(parent)}
}

// An extension, a repeat, a reorg of depth 2 naming what it replaced, a
// reorg deeper than the links kept, and a jump over missed links.
func TestFollower(t *testing.T) {
	f := New(4)
	for _, l := range []Link{link(1, "a1", "a0"), link(2, "a2", "a1"), link(3, "a3", "a2"), link(4, "a4", "a3")} {
		assert.Equal(t, Outcome{}, f.Apply(l))
	}
	assert.Equal(t, Outcome{Repeat: true}, f.Apply(link(3, "a3", "a2")))
	out := f.Apply(link(3, "b3", "a2"))
	assert.True(t, out.Reorg)
	assert.Equal(t, []Link{link(3, "a3", "a2"), link(4, "a4", "a3")}, out.Replaced, "depth 2, oldest first")
	canonical, known := f.Canonical(3, h("a3"))
	assert.True(t, known)
	assert.False(t, canonical, "a3 was replaced")
	canonical, _ = f.Canonical(3, h("b3"))
	assert.True(t, canonical)
	assert.Equal(t, Outcome{}, f.Apply(link(4, "b4", "b3")))

	out = f.Apply(link(2, "c2", "c1"))
	assert.True(t, out.Reorg && out.Deep, "the parent is older than the links kept")
	assert.Len(t, out.Replaced, 3)
	tip, _ := f.Tip()
	assert.Equal(t, h("c2"), tip.Hash)

	assert.Equal(t, Outcome{}, f.Apply(link(9, "c9", "c8")), "a jump is no reorg")
	_, known = f.Canonical(2, h("c2"))
	assert.False(t, known, "the chain starts over after a jump")
}
