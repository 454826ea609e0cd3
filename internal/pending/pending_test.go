package pending

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTakeOldestMatchesAScan drives the pending table through random
// registrations (in and out of id order, as concurrent callers make
// them), answers by id, give-ups that keep their place, heartbeat entries
// and answers without an id, and checks every takeOldest against a scan
// of a plain map for the smallest id someone waits for.
func TestTakeOldestMatchesAScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	tab := NewTable()
	model := make(map[uint64]*Call)
	var next uint64
	oldest := func() (uint64, *Call) {
		var id uint64
		var found *Call
		for k, p := range model {
			if (p.To != nil || p.Done != nil || p.owed) && (found == nil || k < id) {
				id, found = k, p
			}
		}
		return id, found
	}
	someID := func() (uint64, bool) {
		for k := range model {
			return k, true
		}
		return 0, false
	}
	for step := range 50_000 {
		switch op := rng.IntN(10); {
		case op < 4: // a registration; sometimes two callers swap places
			n := 1 + rng.IntN(2)
			ids := make([]uint64, n)
			for i := range ids {
				next++
				ids[i] = next
			}
			if n == 2 && rng.IntN(2) == 0 {
				ids[0], ids[1] = ids[1], ids[0]
			}
			for _, id := range ids {
				p := &Call{Done: make(chan Response, 1)}
				if rng.IntN(8) == 0 {
					p = &Call{} // a heartbeat reply: nobody waits
				}
				require.NoError(t, tab.Add(id, p))
				model[id] = p
			}
		case op < 6: // answered by id
			if id, ok := someID(); ok {
				got := tab.Take(id)
				if model[id].owed { // abandon made the table's own placeholder
					require.True(t, got.owed)
				} else {
					require.Same(t, model[id], got)
				}
				delete(model, id)
			}
		case op == 6: // given up on, place kept
			if id, ok := someID(); ok {
				require.True(t, tab.Abandon(id))
				model[id] = &Call{owed: true}
			}
		case op == 7: // given up on, place dropped
			if id, ok := someID(); ok {
				require.True(t, tab.Remove(id))
				delete(model, id)
			}
		default: // an answer without an id
			wantID, want := oldest()
			gotID, got := tab.TakeOldest()
			if want == nil {
				require.Nil(t, got, "step %d", step)
				continue
			}
			require.Equal(t, wantID, gotID, "step %d", step)
			require.Equal(t, want.owed, got.owed, "step %d", step)
			if !want.owed {
				require.Same(t, want, got, "step %d", step)
			}
			delete(model, wantID)
		}
		require.Equal(t, len(model), tab.Len())
	}
	require.LessOrEqual(t, len(tab.order.ids), max(64, 2*len(model))+1, "order holds what it no longer needs")

	tab.FailAll(errors.New("gone"))
	_, p := tab.TakeOldest()
	require.Nil(t, p)
}

// BenchmarkTakeOldest is one restore's answers on a dialect that answers
// in order without ids: n registered, then n taken oldest first.
func BenchmarkTakeOldest(b *testing.B) {
	const n = 10_000
	calls := make([]*Call, n)
	for i := range calls {
		calls[i] = &Call{Done: make(chan Response, 1)}
	}
	b.ReportAllocs()
	for b.Loop() {
		tab := NewTable()
		for i, p := range calls {
			_ = tab.Add(uint64(i+1), p)
		}
		for range n {
			if _, p := tab.TakeOldest(); p == nil {
				b.Fatal("none")
			}
		}
	}
}
