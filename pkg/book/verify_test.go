package book_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/pkg/book"
)

// depthRules is a made-up venue's book rules: messages "S|C b:P:Q,... a:P:Q,..."
// (S snapshot or C change) whose checksum is the number of levels the
// book holds after the message, at a subscribed depth of 2.
type depthRules struct{}

func (depthRules) Parse(payload []byte, _ bool, u *book.Update) error {
	fields := strings.Fields(string(payload))
	u.Snapshot = fields[0] == "S"
	n, err := strconv.ParseUint(fields[1], 10, 64)
	if err != nil {
		return err
	}
	u.Checksum = n
	for _, f := range fields[2:] {
		sideName, levels, _ := strings.Cut(f, ":")
		for _, l := range strings.Split(levels, ",") {
			p, q, _ := strings.Cut(l, "/")
			if sideName == "b" {
				u.Bids = append(u.Bids, lvl(p, q))
			} else {
				u.Asks = append(u.Asks, lvl(p, q))
			}
		}
	}
	return nil
}

func (depthRules) AppendSnapshot(dst []byte, _ *book.State) []byte { return dst }

func (depthRules) Depth() int { return 2 }

func (depthRules) Verify(u *book.Update, bids, asks []book.Level) error {
	if got := uint64(len(bids) + len(asks)); got != u.Checksum {
		return fmt.Errorf("checksum %d, the book's %d", u.Checksum, got)
	}
	return nil
}

// A Truncating book keeps its depth after every message (the levels
// pushed out get no removal), and a Verifying one breaks on the message
// whose digest the book it leaves does not match.
func TestTruncatedAndVerifiedBook(t *testing.T) {
	b := book.New("made-up", depthRules{})
	require.NoError(t, b.Apply([]byte("S 4 b:99/1,98/1,97/1 a:101/1,102/1"), false))
	bids, asks, ok := b.Top(0, nil, nil)
	require.True(t, ok)
	assert.Equal(t, []book.Level{lvl("99", "1"), lvl("98", "1")}, bids, "the third bid is beyond the depth")
	assert.Len(t, asks, 2)

	require.NoError(t, b.Apply([]byte("C 4 b:99.5/2"), false), "an insert pushes 98 out")
	bids, _, _ = b.Top(0, nil, nil)
	assert.Equal(t, []book.Level{lvl("99.5", "2"), lvl("99", "1")}, bids)

	err := b.Apply([]byte("C 3 a:101.5/1"), false)
	require.ErrorIs(t, err, book.ErrBreak)
	assert.Contains(t, err.Error(), "checksum 3, the book's 4")
	assert.False(t, b.Valid())
	assert.Equal(t, uint64(1), b.Stats().Breaks)

	require.NoError(t, b.Apply([]byte("C 4 a:100.5/1"), false), "changes wait for a snapshot")
	assert.False(t, b.Valid())
	require.ErrorIs(t, b.Apply([]byte("S 9 b:99/1 a:101/1"), false), book.ErrBreak, "a snapshot is verified too")
	assert.False(t, b.Valid())
	require.NoError(t, b.Apply([]byte("S 2 b:99/1 a:101/1"), false))
	assert.True(t, b.Valid())
}
