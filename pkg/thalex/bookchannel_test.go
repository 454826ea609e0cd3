package thalex

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/pkg/venue"
)

// parseBookChannel takes a book topic apart by its structure
// (book.<instrument>.<grouping>.<nlevels>.<delay>, the API
// specification's layout), so a fractional grouping is a book, and it
// refuses anything else.
func TestParseBookChannel(t *testing.T) {
	for _, tc := range []struct {
		topic string
		want  bookChannel // zero: not a book
	}{
		// The specification's example channel.
		{"book.BTC-PERPETUAL.none.all.1000ms", bookChannel{"BTC-PERPETUAL", "none", "all", "1000ms"}},
		{"book.BTC-PERPETUAL.none.10.100ms", bookChannel{"BTC-PERPETUAL", "none", "10", "100ms"}},
		// A grouping with a decimal point: five dots in the topic.
		{"book.BTC-PERPETUAL.0.5.all.1000ms", bookChannel{"BTC-PERPETUAL", "0.5", "all", "1000ms"}},
		{"book.ETH-PERPETUAL.2.5.20.raw", bookChannel{"ETH-PERPETUAL", "2.5", "20", "raw"}},
		{"book.BTC-27JUN25-100000-C.10.5.60000ms", bookChannel{"BTC-27JUN25-100000-C", "10", "5", "60000ms"}},
		{"book.BTC-PERPETUAL.0.25.all.raw", bookChannel{"BTC-PERPETUAL", "0.25", "all", "raw"}},

		// Too few or too many parts.
		{"book.X.1.2", bookChannel{}},
		{"book.X.none.all", bookChannel{}},
		{"book.BTC-PERPETUAL", bookChannel{}},
		{"book.", bookChannel{}},
		{"book", bookChannel{}},
		{"book.BTC-PERPETUAL.1.2.3.all.raw", bookChannel{}}, // a grouping of two dots
		// Empty parts.
		{"book..none.all.raw", bookChannel{}},
		{"book.BTC-PERPETUAL..all.raw", bookChannel{}},
		{"book.BTC-PERPETUAL.none..raw", bookChannel{}},
		{"book.BTC-PERPETUAL.none.all.", bookChannel{}},
		// A grouping neither none nor a positive decimal.
		{"book.BTC-PERPETUAL.fine.all.raw", bookChannel{}},
		{"book.BTC-PERPETUAL.None.all.raw", bookChannel{}},
		{"book.BTC-PERPETUAL.-1.all.raw", bookChannel{}},
		{"book.BTC-PERPETUAL.1e3.all.raw", bookChannel{}},
		{"book.BTC-PERPETUAL.0.all.raw", bookChannel{}},
		{"book.BTC-PERPETUAL.0.0.all.raw", bookChannel{}},
		{"book.BTC-PERPETUAL..5.all.raw", bookChannel{}},
		{"book.BTC-PERPETUAL.5..all.raw", bookChannel{}},
		{"book.BTC-PERPETUAL.a.5.all.raw", bookChannel{}},
		// nlevels neither all nor a positive count.
		{"book.BTC-PERPETUAL.none.0.raw", bookChannel{}},
		{"book.BTC-PERPETUAL.none.-5.raw", bookChannel{}},
		{"book.BTC-PERPETUAL.none.ALL.raw", bookChannel{}},
		// A delay neither raw nor milliseconds.
		{"book.BTC-PERPETUAL.none.all.1s", bookChannel{}},
		{"book.BTC-PERPETUAL.none.all.ms", bookChannel{}},
		{"book.BTC-PERPETUAL.none.all.0ms", bookChannel{}},
		{"book.BTC-PERPETUAL.none.all.100", bookChannel{}},
		// Other channels.
		{"ticker.BTC-PERPETUAL.raw", bookChannel{}},
		{"lwt.BTC-PERPETUAL.1000ms", bookChannel{}},
		{"books.BTC-PERPETUAL.none.all.raw", bookChannel{}},
		{"", bookChannel{}},
	} {
		got, ok := parseBookChannel(tc.topic)
		assert.Equal(t, tc.want != bookChannel{}, ok, tc.topic)
		assert.Equal(t, tc.want, got, tc.topic)
		assert.Equal(t, ok, BookRules(tc.topic) != nil, "BookRules agrees on %s", tc.topic)
		if ok {
			assert.Equal(t, tc.topic, got.String(), "written again")
		}
	}
}

// The made-up feed's book topics are books to BookRules, and are Thalex's
// layout: the two write and read the one format.
func TestFeedBookTopicsParse(t *testing.T) {
	f := &feed{m: venue.NewMarket(1)}
	var books int
	for _, topic := range f.Topics(f.Instruments()) {
		if topic.Kind != venue.FeedBook {
			continue
		}
		books++
		c, ok := parseBookChannel(topic.Topic)
		require.True(t, ok, topic.Topic)
		assert.Equal(t, topic.Instrument, c.Instrument)
		assert.NotNil(t, BookRules(topic.Topic))
	}
	assert.Equal(t, len(f.Instruments()), books)
}

// FuzzBookChannel: parseBookChannel never panics, and a topic it accepts
// is made of parts it would accept, written back to the same string.
// Seeds: the table's topics, and testdata/fuzz/FuzzBookChannel.
func FuzzBookChannel(f *testing.F) {
	for _, s := range []string{
		"book.BTC-PERPETUAL.none.all.1000ms", "book.BTC-PERPETUAL.0.5.all.1000ms",
		"book.X.1.2", "book.BTC-PERPETUAL.1.2.3.all.raw", "book..none.all.raw", "ticker.BTC-PERPETUAL.raw",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, topic string) {
		c, ok := parseBookChannel(topic)
		if !ok {
			if c != (bookChannel{}) {
				t.Fatalf("%q refused with parts %+v", topic, c)
			}
			return
		}
		if c.String() != topic {
			t.Fatalf("%q written again as %q", topic, c.String())
		}
		if c.Instrument == "" || strings.Contains(c.Instrument, ".") || strings.Count(c.Grouping, ".") > 1 ||
			!validGrouping(c.Grouping) || !validLevels(c.Levels) || !validDelay(c.Delay) {
			t.Fatalf("%q accepted as %+v", topic, c)
		}
	})
}
