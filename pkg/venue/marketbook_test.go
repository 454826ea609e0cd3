package venue_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/pkg/venue"
)

// A made-up book agrees with its instrument's price, which the tickers
// report: the mid stands between the best bid and the best ask after
// every step, however far the price walked, and the book is never
// crossed.
func TestBookFollowsThePrice(t *testing.T) {
	m := venue.NewMarket(7)
	in := m.Instrument("BTC-PERPETUAL")
	b := m.Book("BTC-PERPETUAL", 10)
	now := time.Now()
	for i := range 2000 {
		now = now.Add(100 * time.Millisecond)
		m.Advance(now)
		b.Step()
		bid, ask := b.Levels(-1)[0][0], b.Levels(+1)[0][0]
		require.Less(t, bid, ask, "step %d: crossed", i)
		require.LessOrEqual(t, bid, in.Mid+in.Tick/2, "step %d: the best bid is above the mid", i)
		require.GreaterOrEqual(t, ask, in.Mid-in.Tick/2, "step %d: the best ask is below the mid", i)
		require.LessOrEqual(t, ask-bid, 2*in.Tick+1e-9, "step %d: the spread is one tick a side", i)
	}
}
