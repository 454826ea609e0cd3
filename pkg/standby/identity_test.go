package standby_test

import (
	"bytes"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/zeebo/xxh3"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/standby"

	_ "github.com/wsfan/wsfan/pkg/ethereal"
	_ "github.com/wsfan/wsfan/pkg/kraken"
	_ "github.com/wsfan/wsfan/pkg/okx"
	_ "github.com/wsfan/wsfan/pkg/thalex"
)

// identityRun is how long TestCopiesIdenticalOnTwoLegs runs each venue's
// feed: half a second in make test; WSFAN_STANDBY_IDENTITY_FOR (a Go
// duration, as 1m) runs it longer.
func identityRun(t *testing.T) time.Duration {
	s := os.Getenv("WSFAN_STANDBY_IDENTITY_FOR")
	if s == "" {
		return 500 * time.Millisecond
	}
	d, err := time.ParseDuration(s)
	require.NoError(t, err, "WSFAN_STANDBY_IDENTITY_FOR")
	return d
}

// legTap keeps the frames each leg (a Client of the Standby) read.
type legTap struct {
	mu     sync.Mutex
	frames map[uint64][][]byte // by ConnInfo.Client
}

func (lt *legTap) FrameRead(conn client.ConnInfo, frame []byte, _ time.Time) {
	lt.mu.Lock()
	defer lt.mu.Unlock()
	lt.frames[conn.Client] = append(lt.frames[conn.Client], bytes.Clone(frame))
}

func (*legTap) FrameWritten(client.ConnInfo, []byte, time.Time) {}

// Two legs of a Standby read each venue's feed from the test exchange
// (its made-up market data, in the venue's documented layout) for
// identityRun: every notification either leg read has copy bytes
// (protocol.MessageReader.CopyBytes), the two legs read the same copy
// bytes, as many times each (Ethereum's under each connection's own
// subscription id), and the merged stream delivers each once. The test
// exchange encodes a notification once for all its subscribers, so the
// bytes past the connection's own part are the same by construction:
// what this checks is the client's side (each venue's copy layout
// covers its notifications and cuts what each connection is given, and
// the fast path and the merge deliver each once), not that a real
// venue writes its connections the same bytes.
func TestCopiesIdenticalOnTwoLegs(t *testing.T) {
	run := identityRun(t)
	for _, d := range protocol.Names() {
		t.Run(d, func(t *testing.T) {
			ctx := testutil.Context(t)
			srv := exchangetest.NewServer(exchangetest.Dialect(d))
			t.Cleanup(srv.Close)
			p, err := protocol.ByName(d)
			require.NoError(t, err)
			tap := &legTap{frames: make(map[uint64][][]byte)}
			sb, err := standby.Dial(ctx, srv.URL(), 1, client.WithProtocol(p), client.WithFrameTap(tap))
			require.NoError(t, err)
			t.Cleanup(func() { _ = sb.Close() })
			topics := exchangetest.FeedTopicsOf(exchangetest.Dialect(d), exchangetest.FeedOptions{})
			sub, err := sb.Subscribe(ctx, topics, client.Buffer(1<<20))
			require.NoError(t, err)
			for _, topic := range topics {
				require.NoError(t, srv.WaitSubscribers(ctx, topic, 2))
			}
			var delivered atomic.Int64
			go func() { // the program's loop, until Close ends the subscription
				for range sub.C() {
					delivered.Add(1)
				}
			}()
			srv.StartFeed(exchangetest.FeedOptions{Interval: 5 * time.Millisecond})
			time.Sleep(run)
			srv.StopFeed()

			// The feed is over once neither leg reads more.
			read := func() (n []int) {
				tap.mu.Lock()
				defer tap.mu.Unlock()
				for _, frames := range tap.frames {
					n = append(n, len(frames))
				}
				return n
			}
			for last := read(); ; last = read() {
				time.Sleep(50 * time.Millisecond)
				if slices.Equal(read(), last) {
					break
				}
			}
			// Each leg's notifications, by their copy bytes' hash.
			var legs []map[xxh3.Uint128]int
			tap.mu.Lock()
			for _, frames := range tap.frames {
				keys := make(map[xxh3.Uint128]int)
				for _, frame := range frames {
					var f protocol.Frame
					if p.Classify(frame, &f) != nil || f.Kind != protocol.KindNotification {
						continue
					}
					b, ok := p.Venue().Messages.CopyBytes(frame)
					if !assert.True(t, ok, "a notification with no copy bytes: %.200s", frame) {
						continue
					}
					keys[xxh3.Hash128(b)]++
				}
				legs = append(legs, keys)
			}
			tap.mu.Unlock()
			total := func(keys map[xxh3.Uint128]int) (n int) {
				for _, k := range keys {
					n += k
				}
				return n
			}
			require.Len(t, legs, 2, "frames from two legs")
			assert.Equal(t, legs[0], legs[1], "the two legs read the same copy bytes, as many times each")
			require.Eventually(t, func() bool { return delivered.Load() >= int64(total(legs[0])) }, 10*time.Second, 10*time.Millisecond,
				"the merged stream delivers each notification: %d of %d", delivered.Load(), total(legs[0]))
			time.Sleep(50 * time.Millisecond)
			assert.Equal(t, int64(total(legs[0])), delivered.Load(), "the merged stream delivered each once")
			assert.Greater(t, total(legs[0]), int(run/(50*time.Millisecond)), "the feed ran")
			assert.Zero(t, sub.Dropped())
			t.Logf("%d notifications on each leg, %d distinct", total(legs[0]), len(legs[0]))
		})
	}
}
