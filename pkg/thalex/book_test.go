package thalex_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/pkg/book"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// A book channel whose grouping has a decimal point is a book too, and
// book.RulesFor finds it under "thalex". The payload is the
// specification's example of the book channel's notification.
func TestFractionalGroupingBook(t *testing.T) {
	topic := "book.BTC-PERPETUAL.0.5.all.1000ms"
	rules := thalex.BookRules(topic)
	require.NotNil(t, rules)
	assert.NotNil(t, book.RulesFor(thalex.Name, topic))
	b := book.New(topic, rules)
	require.NoError(t, b.Apply([]byte(`{"trades":[[9120.5,15,"buy",156789.103,false],[9121,30,"buy",156789.123,false]],"bid_changes":[[9120.5,0,0],[9121,54,53]],"total_bid_amount":45,"total_ask_amount":30,"time":1683901254.785744}`), true))
	s := b.Copy()
	require.Len(t, s.Bids, 1, "the level of amount 0 is empty")
	assert.Equal(t, "9121", s.Bids[0].Price.String())
	assert.Equal(t, int64(1683901254785744000), s.Time.UnixNano())

	assert.Nil(t, thalex.BookRules("book.X.1.2"), "too few parts")
	assert.Nil(t, thalex.BookRules("book.BTC-PERPETUAL.half.all.1000ms"), "a grouping neither none nor a number")
}
