package ethereal_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/book"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/ethereal"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// l2Levels writes n levels [price, quantity] from price from, one apart.
func l2Levels(from, step float64, n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprintf(`["%g","1"]`, from+step*float64(i))
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// pt is optional on L2Book
// (https://docs.ethereal.trade/developer-guides/trading-api/websockets):
// the first message after a subscribe is the whole book, every later one
// a diff with absolute quantities. A later message without pt is a diff:
// the book keeps the levels it does not name; a pt that is not the last
// t is still a gap.
func TestL2BookChangeWithoutPtIsADiff(t *testing.T) {
	const topic = "L2Book:BTCUSD"
	srv := exchangetest.NewServer(ethereal.Name)
	t.Cleanup(srv.Close)
	c := dialEthereal(t, srv)
	ctx := testutil.Context(t)
	sub, err := c.Subscribe(ctx, []string{topic})
	require.NoError(t, err)
	require.NoError(t, srv.WaitSubscribers(ctx, topic, 1))

	b := book.New(topic, ethereal.BookRules(topic))
	next := func() client.Message {
		t.Helper()
		select {
		case m := <-sub.C():
			require.NoError(t, b.Apply(m.Data, m.Snapshot()))
			return m
		case <-ctx.Done():
			t.Fatal("no L2Book message")
			return client.Message{}
		}
	}

	// The whole book, 50 levels a side, without pt.
	srv.Publish(topic, []byte(`{"s":"BTCUSD","t":1000,"a":`+l2Levels(101, 1, 50)+`,"b":`+l2Levels(100, -1, 50)+`}`))
	assert.True(t, next().Snapshot(), "the first message is the whole book")
	bids, asks := b.Depth()
	require.Equal(t, [2]int{50, 50}, [2]int{bids, asks})

	// A diff without pt: one level changes, the other 99 stay.
	srv.Publish(topic, []byte(`{"s":"BTCUSD","t":1200,"a":[["101","0"]],"b":[["100","3"]]}`))
	m := next()
	assert.False(t, m.Snapshot(), "a later message without pt is a diff")
	assert.False(t, m.Gap())
	bids, asks = b.Depth()
	assert.Equal(t, [2]int{50, 49}, [2]int{bids, asks}, "the levels the diff does not name are kept")
	bid, ask, ok := b.Best()
	require.True(t, ok)
	assert.Equal(t, "100", bid.Price.String())
	assert.Equal(t, "3", bid.Size.String())
	assert.Equal(t, "102", ask.Price.String())

	// A diff naming the last t follows on; one naming another is a gap.
	srv.Publish(topic, []byte(`{"s":"BTCUSD","t":1400,"pt":1200,"a":[],"b":[["99","2"]]}`))
	m = next()
	assert.False(t, m.Gap() || m.Snapshot())
	srv.Publish(topic, []byte(`{"s":"BTCUSD","t":1800,"pt":1600,"a":[],"b":[]}`))
	select {
	case m := <-sub.C():
		assert.True(t, m.Gap(), "pt 1600 is not the last t, 1400")
		var brk *book.BreakError
		assert.ErrorAs(t, b.Apply(m.Data, m.Snapshot()), &brk)
	case <-ctx.Done():
		t.Fatal("no L2Book message")
	}
}

// Sequence takes a pt as it is and names a message without one
// protocol.Unchained: the client decides by its place whether it is the
// whole book or a change (TestL2BookChangeWithoutPtIsADiff).
func TestSequenceWithoutPt(t *testing.T) {
	p := ethereal.Protocol()
	seq := func(data string) [2]uint64 {
		t.Helper()
		id, prev, ok := p.Sequence([]byte(`{"e":"L2Book","t":1,"data":` + data + `}`))
		require.True(t, ok)
		return [2]uint64{id, prev}
	}
	assert.Equal(t, [2]uint64{10, protocol.Unchained}, seq(`{"s":"BTCUSD","t":10,"a":[],"b":[]}`))
	assert.Equal(t, [2]uint64{30, 25}, seq(`{"s":"BTCUSD","t":30,"pt":25}`), "a pt present is kept")
	assert.Equal(t, [2]uint64{30, 0}, seq(`{"s":"BTCUSD","t":30,"pt":0}`), "pt 0: the whole book")
	_, _, ok := p.Sequence([]byte(`{"e":"L2Book","t":1,"data":{"s":"BTCUSD","pt":3}}`))
	assert.False(t, ok, "no data.t")
}
