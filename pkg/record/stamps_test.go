package record_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/record"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// A recording keeps each frame's receive stamp: the time a notification
// is recorded at is, to the nanosecond, the Message.RecvTime the program
// read it with (one stamp, taken at the socket read, for both), over a
// live connection to a test exchange.
func TestRecordingKeepsEachFramesReceiveStamp(t *testing.T) {
	srv := exchangetest.NewServer(thalex.Name)
	defer srv.Close()
	ctx := testutil.Context(t)
	proto := thalex.Protocol(thalex.WithNotices(false))
	dir := filepath.Join(t.TempDir(), "rec")
	rec, err := record.New(dir, proto, record.Options{})
	require.NoError(t, err)
	c, err := client.Dial(ctx, srv.URL(), client.WithProtocol(proto), client.WithFrameTap(rec))
	require.NoError(t, err)
	const topic, n = "ticker.BTC-PERPETUAL.raw", 200
	sub, err := c.Subscribe(ctx, []string{topic})
	require.NoError(t, err)
	for i := range n {
		srv.Publish(topic, fmt.Appendf(nil, `{"n":%d}`, i))
	}
	read := map[string]int64{} // each payload's RecvTime, as the program read it
	for range n {
		m := <-sub.C()
		require.False(t, m.RecvTime.IsZero())
		read[string(m.Data)] = m.RecvTime.UnixNano()
	}
	require.NoError(t, c.Close())
	require.NoError(t, rec.Close())

	all, _ := readAll(t, dir, record.Window{})
	recorded := 0
	for _, r := range all {
		if r.Dir != record.Received || r.Topic != topic {
			continue
		}
		var f protocol.Frame
		require.NoError(t, proto.Classify(r.Frame, &f))
		at, ok := read[string(f.Data)]
		require.True(t, ok, "a recorded notification the program read: %s", r.Frame)
		assert.Equal(t, at, r.Time.UnixNano(), "recorded at the receive stamp of %s", f.Data)
		recorded++
	}
	assert.Equal(t, n, recorded, "every notification recorded once")
}
