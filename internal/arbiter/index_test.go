package arbiter

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// The index answers as a Go map does through any run of insertions,
// changes and deletions (of an identity's slot, or of another slot,
// which leaves the identity where it is), its identities crowded on few home positions
// (a window of 8: 16 entries) so that probes run on and wrap round, and
// deletions move entries back.
func TestIndexIsAMap(t *testing.T) {
	x := newIndex(8)
	model := map[uint64]int32{}
	r := rand.New(rand.NewPCG(1, 2))
	for step := range 20_000 {
		id := uint64(r.IntN(24)) | uint64(r.IntN(3))<<40 // 72 identities on 16 homes
		switch {
		case r.IntN(2) == 0 && len(model) < 8:
			slot := int32(r.IntN(1024))
			x.put(id, slot)
			model[id] = slot
		default: // a deletion: of id's slot, or of another one, which leaves id be
			slot, ok := model[id]
			if !ok || r.IntN(3) == 0 {
				slot = int32(r.IntN(1024))
			}
			x.delSlot(id, slot)
			if model[id] == slot {
				delete(model, id)
			}
		}
		for probe := range uint64(24) {
			for hi := range uint64(3) {
				id := probe | hi<<40
				got, ok := x.get(id)
				want, wantOK := model[id]
				require.Equal(t, wantOK, ok, "step %d: id %#x", step, id)
				require.Equal(t, want, got, "step %d: id %#x", step, id)
			}
		}
		require.Equal(t, len(model), x.len(), "step %d", step)
	}
}
