package kraken

import (
	"bytes"
	"hash/crc32"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/pkg/book"
	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/venue"
)

// documentedSnapshot is the guide's worked example, from the corpus.
func documentedSnapshot(t *testing.T) []byte {
	raw, err := os.ReadFile("testdata/documented.txt")
	require.NoError(t, err)
	for _, line := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(line, "<-- ") && strings.Contains(line, "3310070434") {
			_, frame, _ := strings.Cut(line, "notification ")
			return []byte(frame)
		}
	}
	t.Fatal("no worked example in the corpus")
	return nil
}

// The guide's worked example reproduces its checksum, 3310070434, read
// through the client half as a program's book reads it; the same book
// with a quantity's trailing zeros dropped (what a float parse writes
// back) does not.
func TestDocumentedChecksum(t *testing.T) {
	frame := documentedSnapshot(t)
	var f protocol.Frame
	require.NoError(t, Protocol().Classify(frame, &f))
	require.True(t, f.Snapshot)
	b := book.New("book:BTC/USD:10", BookRules("book:BTC/USD:10"))
	require.NoError(t, b.Apply(f.Data, true))
	require.True(t, b.Valid())

	// A book that wrote its numbers back in their shortest form (what a
	// float parse does: 0.10000000 becomes 0.1) sums other digits.
	s := b.Copy()
	var short []byte
	for _, side := range [][]book.Level{s.Asks, s.Bids} {
		for _, l := range side {
			for _, d := range []book.Decimal{l.Price, l.Size} {
				text := strings.TrimLeft(strings.ReplaceAll(d.String(), ".", ""), "0")
				short = append(short, text...)
			}
		}
	}
	assert.NotEqual(t, uint32(3310070434), crc32.ChecksumIEEE(short))

	r := BookRules("book:BTC/USD:10").(*bookRules)
	r.pricePrec.Store(1)
	r.qtyPrec.Store(8)
	sum, err := r.checksum(s.Bids, s.Asks)
	require.NoError(t, err)
	assert.Equal(t, uint32(3310070434), sum)
}

// Every book message of a stream of 100,000 random updates, at three
// precisions (1, 2 and 8 decimals; quantities to 8 and 5 with trailing
// zeros), and two depths, matches the test exchange's checksum; the
// book stays the exchange's top levels; and a single corrupted level is
// caught on the message that carries it.
func TestRandomUpdatesMatchTheExchangeChecksum(t *testing.T) {
	const updates = 100_000
	f := newFeed(7)
	topics := []venue.FeedTopic{
		{Topic: "book:BTC/USD:10", Instrument: "BTC/USD", Kind: venue.FeedBook},
		{Topic: "book:ETH/USD:25", Instrument: "ETH/USD", Kind: venue.FeedBook},
		{Topic: "book:SHIB/USD:10", Instrument: "SHIB/USD", Kind: venue.FeedBook},
	}
	books := make([]*book.Book, len(topics))
	for i, ft := range topics {
		books[i] = book.New(ft.Topic, BookRules(ft.Topic))
		require.NoError(t, books[i].Apply(f.Snapshot(ft), true))
	}
	for n := 0; n < updates; {
		f.Advance(f.now)
		for i, ft := range topics {
			payload := f.Payload(ft)
			require.NoError(t, books[i].Apply(payload, false), "update %d of %s: %s", n, ft.Topic, payload)
			n++
			if n%10_000 == 0 {
				bids, asks, ok := books[i].Top(0, nil, nil)
				require.True(t, ok)
				pb := f.books[ft.Instrument]
				depth := depthOf(ft.Topic)
				assert.Equal(t, min(depth, len(pb.bids)), len(bids), "%s holds its depth", ft.Topic)
				assert.Equal(t, min(depth, len(pb.asks)), len(asks))
				assert.Equal(t, fixed(sortedPrices(pb.bids, -1)[0], pb.pair.pricePrec), string(appendFixed(nil, bids[0].Price, pb.pair.pricePrec)), "%s: the best bid", ft.Topic)
			}
		}
	}
	for i, b := range books {
		assert.Zero(t, b.Stats().Breaks, topics[i].Topic)
	}

	// One level of the next message corrupted: caught on that message.
	f.Advance(f.now)
	ft := topics[0]
	payload := f.Payload(ft)
	i := bytes.Index(payload, []byte(`"qty":`))
	require.Positive(t, i, "%s", payload)
	corrupt := append(append(bytes.Clone(payload[:i+6]), '9'), payload[i+6:]...)
	err := books[0].Apply(corrupt, false)
	require.ErrorIs(t, err, book.ErrBreak)
	assert.Contains(t, err.Error(), "checksum")
	assert.False(t, books[0].Valid())
	require.NoError(t, books[0].Apply(f.Snapshot(ft), true), "a fresh snapshot makes it whole")
	assert.True(t, books[0].Valid())
}

// A book resubscribed again and again (its checksum failing on each
// fresh snapshot) is resubscribed after 1 s, doubling to 30 s: the
// dialect spaces its resyncs (protocol.Venue.Resync).
func TestRepeatedResyncsAreSpaced(t *testing.T) {
	r := Protocol().Venue().Resync
	assert.Equal(t, time.Second, r.First)
	assert.Equal(t, 30*time.Second, r.Most)
}
