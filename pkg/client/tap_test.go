package client_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// tapped keeps copies of the frames a FrameTap saw.
type tapped struct {
	mu            sync.Mutex
	read, written []string
	conns         map[client.ConnInfo]bool
}

func (t *tapped) FrameRead(c client.ConnInfo, frame []byte, _ time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.read = append(t.read, string(frame))
	t.conns[c] = true
}

func (t *tapped) FrameWritten(c client.ConnInfo, frame []byte, _ time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.written = append(t.written, string(frame))
	t.conns[c] = true
}

// A FrameTap sees the subscribe the client wrote and the notification it
// read, verbatim, each with its connection; after a reconnect the
// restore goes over the next connection number.
func TestFrameTapSeesEveryFrame(t *testing.T) {
	srv := exchangetest.NewServer(thalex.Name)
	defer srv.Close()
	ctx := testutil.Context(t)
	tap := &tapped{conns: map[client.ConnInfo]bool{}}
	c, err := client.Dial(ctx, srv.URL(), client.WithProtocol(thalex.Protocol(thalex.WithNotices(false))), client.WithFrameTap(tap))
	require.NoError(t, err)
	defer c.Close()
	sub, err := c.Subscribe(ctx, []string{"ticker.BTC-PERPETUAL.raw"})
	require.NoError(t, err)
	srv.Publish("ticker.BTC-PERPETUAL.raw", []byte(`{"mark_price":1}`))
	<-sub.C()
	srv.DropConnections()
	require.Eventually(t, func() bool {
		tap.mu.Lock()
		defer tap.mu.Unlock()
		return tap.conns[client.ConnInfo{Client: c1(tap), Conn: 2}]
	}, 10*time.Second, 5*time.Millisecond, "the restore on the next connection")

	tap.mu.Lock()
	defer tap.mu.Unlock()
	subscribes := 0
	for _, w := range tap.written {
		if strings.Contains(w, "ticker.BTC-PERPETUAL.raw") {
			subscribes++
		}
	}
	assert.GreaterOrEqual(t, subscribes, 2, "the subscribe and its restore: %q", tap.written)
	assert.Contains(t, strings.Join(tap.read, "\n"), `{"mark_price":1}`)
	nums := map[uint64]bool{}
	for ci := range tap.conns {
		nums[ci.Conn] = true
		assert.Positive(t, ci.Client)
	}
	assert.True(t, nums[1] && nums[2], "frames of both connections: %v", tap.conns)
}

// c1 is the Client number the tap saw first. Called with t.mu held.
func c1(t *tapped) uint64 {
	for ci := range t.conns {
		return ci.Client
	}
	return 0
}
