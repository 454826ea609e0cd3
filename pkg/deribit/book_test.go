package deribit_test

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/pkg/book"
	"github.com/wsfan/wsfan/pkg/deribit"
)

// documentedData returns the data of the notifications on channel in
// testdata/documented.txt, in order.
func documentedData(t *testing.T, channel string) [][]byte {
	t.Helper()
	f, err := os.Open("testdata/documented.txt")
	require.NoError(t, err)
	defer func() { _ = f.Close() }()
	var out [][]byte
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		frame, ok := strings.CutPrefix(sc.Text(), "<-- notification ")
		if !ok {
			continue
		}
		var n struct {
			Params struct {
				Channel string
				Data    json.RawMessage
			}
		}
		require.NoError(t, json.Unmarshal([]byte(frame), &n))
		if n.Params.Channel == channel {
			out = append(out, n.Params.Data)
		}
	}
	require.NoError(t, sc.Err())
	return out
}

// A change whose prev_change_id is null names no previous change: the
// sequence reader reads it so (prev 0), and the book applies it as a
// change it cannot check, instead of breaking ("not a change id: null")
// and resyncing.
func TestNullPrevChangeIDIsAChangeWithNoPredecessor(t *testing.T) {
	const topic = "book.ETH-PERPETUAL.100ms"
	data := documentedData(t, topic)
	require.Len(t, data, 2, "the snapshot and the change of documented.txt")

	id, prev, ok := deribit.Protocol().Sequence(data[1])
	require.True(t, ok)
	assert.EqualValues(t, 412362, id)
	assert.Zero(t, prev, "no predecessor")

	b := book.New(topic, deribit.BookRules(topic))
	require.NoError(t, b.Apply(data[0], true))
	require.NoError(t, b.Apply(data[1], prev == 0), "the client marks it as it reads it")
	s := b.Copy()
	require.True(t, s.Valid)
	assert.Equal(t, []book.Level{{Price: book.NewDecimal(16005, 2), Size: book.NewDecimal(1000, 0)}}, s.Bids)
	assert.Equal(t, []book.Level{{Price: book.NewDecimal(1601, 1), Size: book.NewDecimal(800, 0)}}, s.Asks, "a change, not a whole book")
	assert.EqualValues(t, 412362, s.Seq)
	assert.Zero(t, b.Stats().Breaks)
}
