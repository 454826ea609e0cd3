package arbiter

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

// seamLog is a Seam of topics whose messages are their own identities,
// and what it delivered ("old 3", "new 4"), and which topics it marked
// resumed.
func seamLog(topics []string, limit int) (*Seam[string, int], *[]string, map[string]bool) {
	var got []string
	resumed := map[string]bool{}
	s := NewSeam(topics, limit, SeamOps[string, int]{
		ID: func(_ string, m int) uint64 { return uint64(m) },
		Deliver: func(side Side, t string, m int) {
			got = append(got, fmt.Sprintf("%s %s %d", t, map[Side]string{Old: "old", New: "new"}[side], m))
		},
		Keep:    func(m int) int { return m },
		Resumed: func(t string) { resumed[t] = true },
		Left:    func(string) bool { return false },
	})
	return s, &got, resumed
}

// The old connection behind: the new one's messages are held until the
// old one delivers one of them, then the new one's after it follow and
// the old one delivers nothing more. The new connection behind: it
// skips what the old one delivered and carries on. A topic subscribed
// after the new connection was handed out is the new one's alone.
func TestSeamMeetsWhicheverSideIsBehind(t *testing.T) {
	s, got, resumed := seamLog([]string{"a", "b"}, 16)
	for _, m := range []int{3, 4, 5} {
		s.Offer(New, "a", m)
	}
	s.Offer(Old, "a", 2)
	assert.False(t, s.AllMet())
	s.Offer(Old, "a", 3) // the seam
	s.Offer(Old, "a", 4)
	s.Offer(New, "a", 6)

	for _, m := range []int{1, 2, 3} {
		s.Offer(Old, "b", m)
	}
	s.Offer(New, "b", 2)
	s.Offer(New, "b", 3) // past the old one's last
	s.Offer(New, "b", 4)
	s.Offer(Old, "b", 4)

	s.Offer(Old, "c", 1)
	s.Offer(New, "c", 1)
	assert.True(t, s.AllMet())
	assert.Equal(t, []string{
		"a old 2", "a old 3", "a new 4", "a new 5", "a new 6",
		"b old 1", "b old 2", "b old 3", "b new 4",
		"c new 1",
	}, *got)
	assert.Empty(t, resumed)
}

// At the end of the overlap a topic's held messages are delivered: as
// they are when the old connection brought nothing of it, after a
// possible hole (Resumed) when it did, or when it failed. A new
// connection holding as many as the limit is handed the topic at once,
// after a possible hole.
func TestSeamFinishDeliversWhatIsHeld(t *testing.T) {
	s, got, resumed := seamLog([]string{"quiet", "apart", "full"}, 2)
	s.Offer(New, "quiet", 1)
	s.Offer(Old, "apart", 1)
	s.Offer(New, "apart", 7)
	s.Offer(New, "full", 1)
	s.Offer(New, "full", 2)
	s.Offer(New, "full", 3) // over the limit
	s.Finish(false)
	s.Offer(Old, "apart", 2) // too late: the new connection carries it
	assert.ElementsMatch(t, []string{"quiet new 1", "apart old 1", "apart new 7", "full new 1", "full new 2", "full new 3"}, *got)
	assert.Equal(t, map[string]bool{"apart": true, "full": true}, resumed)
	assert.True(t, s.AllMet())
}
