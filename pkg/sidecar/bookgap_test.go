package sidecar_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/sidecar"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// A change the sidecar's upstream connection dropped (here a frame over
// its read limit: the next message is flagged FlagGap) is a hole its
// Thalex book cannot see itself, no change naming its predecessor: the
// sidecar takes it as a break and resyncs the topic upstream, and a
// program following the book through it hears of the hole (its gap
// notice), breaks and resyncs too, and ends with the exchange's book.
// Before, the sidecar applied the next change over the hole, and served
// the book it got wrong to late joiners and /v1/book.
func TestBookGapUpstreamIsABreak(t *testing.T) {
	const topic = "book.BTC-PERPETUAL.none.10.100ms"
	r := newRig(t, thalex.Name, func(c *sidecar.Config) {
		c.UpstreamOptions = []client.Option{client.WithReadLimit(8 << 10)}
	})
	r.up.StartFeed(exchangetest.FeedOptions{Instruments: []string{instrumentOf(topic)}, Interval: 10 * time.Millisecond})
	direct := follow(t, thalex.Name, r.up.URL(), topic)
	through := follow(t, thalex.Name, r.wsURL(), topic)
	moving(t, through, 5)
	subscribes := r.up.CountSubscribes(topic) // the sidecar's and the direct program's

	r.up.Publish(topic, []byte(`{"bid_changes":[],"ask_changes":[],"pad":"`+strings.Repeat("x", 16<<10)+`"}`))
	require.Eventually(t, func() bool { return r.up.CountSubscribes(topic) == subscribes+1 }, 10*time.Second, 5*time.Millisecond,
		"the sidecar resyncs the topic upstream")
	require.Eventually(t, func() bool { return through.Stats().Breaks == 1 }, 10*time.Second, 5*time.Millisecond,
		"the program's book breaks at the hole")
	moving(t, through, 5)
	r.up.StopFeed()
	sameBooks(t, direct, through)
	assert.EqualValues(t, 1, through.Resyncs())
}
