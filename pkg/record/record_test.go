package record_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/deribit"
	"github.com/wsfan/wsfan/pkg/record"
	"github.com/wsfan/wsfan/pkg/thalex"
)

var conn1 = client.ConnInfo{Client: 1, Conn: 1}

// note is a Thalex notification of topic carrying n.
func note(topic string, n int) []byte {
	return fmt.Appendf(nil, `{"channel_name":%q,"notification":{"n":%d}}`, topic, n)
}

func readAll(t *testing.T, dir string, w record.Window) ([]record.Record, record.ReadStats) {
	t.Helper()
	var out []record.Record
	st, err := record.Read(dir, w, func(r *record.Record) error {
		c := *r
		c.Frame = append([]byte(nil), r.Frame...)
		out = append(out, c)
		return nil
	})
	require.NoError(t, err)
	return out, st
}

// Frames read back verbatim, in order, with their times, connections and
// topics; a 5 ms window holds exactly the frames received in it.
func TestRecordReadsBackAWindow(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "rec")
	r, err := record.New(dir, thalex.Protocol(), record.Options{})
	require.NoError(t, err)
	t0 := time.Date(2026, 11, 27, 18, 0, 0, 0, time.UTC)
	for i := range 100 {
		r.FrameRead(conn1, note("ticker.BTC-PERPETUAL.raw", i), t0.Add(time.Duration(i)*time.Millisecond))
	}
	require.NoError(t, r.Close())
	st := r.Stats()
	assert.EqualValues(t, 100, st.Recorded)
	assert.Zero(t, st.Dropped)

	all, _ := readAll(t, dir, record.Window{})
	require.Len(t, all, 100)
	for i, rec := range all {
		assert.Equal(t, string(note("ticker.BTC-PERPETUAL.raw", i)), string(rec.Frame))
		assert.Equal(t, "ticker.BTC-PERPETUAL.raw", rec.Topic)
		assert.True(t, rec.Time.Equal(t0.Add(time.Duration(i)*time.Millisecond)))
		assert.Equal(t, record.Received, rec.Dir)
	}
	window, _ := readAll(t, dir, record.Window{From: t0.Add(40 * time.Millisecond), To: t0.Add(45 * time.Millisecond)})
	require.Len(t, window, 5)
	assert.Equal(t, string(note("ticker.BTC-PERPETUAL.raw", 40)), string(window[0].Frame))
	assert.Equal(t, string(note("ticker.BTC-PERPETUAL.raw", 44)), string(window[4].Frame))

	m, err := record.ReadManifest(dir)
	require.NoError(t, err)
	assert.Equal(t, "thalex", m.Venue)
	assert.EqualValues(t, 100, m.Topics["ticker.BTC-PERPETUAL.raw"])
	require.Len(t, m.Segments, 1)
	assert.NotEmpty(t, m.Segments[0].SHA256)
	for _, name := range []string{dir, filepath.Join(dir, m.Segments[0].Name+".wsrec")} {
		fi, err := os.Stat(name)
		require.NoError(t, err)
		if fi.IsDir() {
			assert.Equal(t, os.FileMode(0o700), fi.Mode().Perm())
		} else {
			assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
		}
	}
}

// What was flushed reads back while the recorder still runs (a process
// killed now loses at most its last flush interval), and a segment cut
// in the middle of its last zstd frame reads back every frame before.
func TestKilledRecordingReadsBack(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "rec")
	r, err := record.New(dir, thalex.Protocol(), record.Options{Flush: 20 * time.Millisecond})
	require.NoError(t, err)
	defer r.Close()
	t0 := time.Now()
	for i := range 50 {
		r.FrameRead(conn1, note("a.b", i), t0.Add(time.Duration(i)*time.Microsecond))
	}
	require.Eventually(t, func() bool {
		_, st, err := tryRead(dir)
		return err == nil && st.Records == 50
	}, 10*time.Second, 10*time.Millisecond, "flushed within the interval, with the recorder running")
	time.Sleep(50 * time.Millisecond) // a second flush: the frames after it are in a frame of their own
	for i := 50; i < 100; i++ {
		r.FrameRead(conn1, note("a.b", i), t0.Add(time.Duration(i)*time.Microsecond))
	}
	require.Eventually(t, func() bool {
		_, st, err := tryRead(dir)
		return err == nil && st.Records == 100
	}, 10*time.Second, 10*time.Millisecond)

	seg := filepath.Join(dir, "000001.wsrec")
	data, err := os.ReadFile(seg)
	require.NoError(t, err)
	cut := filepath.Join(t.TempDir(), "cut")
	require.NoError(t, os.MkdirAll(cut, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(cut, "000001.wsrec"), data[:len(data)-5], 0o600))
	recs, st, err := tryRead(cut)
	require.NoError(t, err)
	assert.Equal(t, 1, st.Truncated)
	require.GreaterOrEqual(t, len(recs), 50, "every frame before the cut one")
	for i, rec := range recs {
		assert.Equal(t, string(note("a.b", i)), string(rec.Frame))
	}
}

func tryRead(dir string) ([]record.Record, record.ReadStats, error) {
	var out []record.Record
	st, err := record.Read(dir, record.Window{}, func(r *record.Record) error {
		c := *r
		c.Frame = append([]byte(nil), r.Frame...)
		out = append(out, c)
		return nil
	})
	return out, st, err
}

// A recorded login shows no secret, and a private topic's notifications
// and the answers to calls that are not read-only are left out unless
// asked for.
func TestRecordingKeepsNoSecret(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "rec")
	r, err := record.New(dir, deribit.Protocol(), record.Options{})
	require.NoError(t, err)
	now := time.Now()
	r.FrameWritten(conn1, []byte(`{"jsonrpc":"2.0","id":1,"method":"public/auth","params":{"grant_type":"client_credentials","client_id":"me","client_secret":"hunter2-secret"}}`), now)
	r.FrameWritten(conn1, []byte(`{"jsonrpc":"2.0","id":2,"method":"private/get_positions","params":{"currency":"BTC"}}`), now)
	r.FrameWritten(conn1, []byte(`{"jsonrpc":"2.0","id":3,"method":"public/get_time","params":{}}`), now)
	r.FrameRead(conn1, []byte(`{"jsonrpc":"2.0","id":1,"result":{"access_token":"tok-secret","refresh_token":"ref-secret"}}`), now)
	r.FrameRead(conn1, []byte(`{"jsonrpc":"2.0","id":2,"result":[{"size":12}]}`), now)
	r.FrameRead(conn1, []byte(`{"jsonrpc":"2.0","id":3,"result":1700000000000}`), now)
	r.FrameRead(conn1, []byte(`{"jsonrpc":"2.0","method":"subscription","params":{"channel":"user.orders.any.any.raw","data":{"order_id":"x"}}}`), now)
	r.FrameRead(conn1, []byte(`{"jsonrpc":"2.0","method":"subscription","params":{"channel":"ticker.BTC-PERPETUAL.raw","data":{"p":1}}}`), now)
	require.NoError(t, r.Close())

	recs, _ := readAll(t, dir, record.Window{})
	var all strings.Builder
	for _, rec := range recs {
		all.Write(rec.Frame)
		all.WriteByte('\n')
	}
	text := all.String()
	for _, secret := range []string{"hunter2-secret", "tok-secret", "ref-secret", `"size":12`, "order_id"} {
		assert.NotContains(t, text, secret)
	}
	assert.Contains(t, text, `"client_secret":"[redacted]"`)
	assert.Contains(t, text, "1700000000000", "a read-only call's answer is kept")
	assert.Contains(t, text, "ticker.BTC-PERPETUAL.raw")
	assert.EqualValues(t, 3, r.Stats().Left, "the login's answer, the positions, the orders")
}

// With Options.Private the answers of calls that are not read-only are
// kept, but a login's answer still shows no token.
func TestPrivateRecordingKeepsNoToken(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "rec")
	r, err := record.New(dir, deribit.Protocol(), record.Options{Private: true})
	require.NoError(t, err)
	now := time.Now()
	r.FrameWritten(conn1, []byte(`{"jsonrpc":"2.0","id":1,"method":"public/auth","params":{"grant_type":"client_credentials","client_id":"me","client_secret":"hunter2-secret"}}`), now)
	r.FrameRead(conn1, []byte(`{"jsonrpc":"2.0","id":1,"result":{"access_token":"tok-secret","refresh_token":"ref-secret","expires_in":900}}`), now)
	r.FrameRead(conn1, []byte(`{"jsonrpc":"2.0","id":2,"result":[{"size":12}]}`), now)
	require.NoError(t, r.Close())
	recs, _ := readAll(t, dir, record.Window{})
	var all strings.Builder
	for _, rec := range recs {
		all.Write(rec.Frame)
	}
	text := all.String()
	for _, secret := range []string{"hunter2-secret", "tok-secret", "ref-secret"} {
		assert.NotContains(t, text, secret)
	}
	assert.Contains(t, text, `"expires_in":900`, "the rest of the answer is kept")
	assert.Contains(t, text, `"size":12`, "a private answer is kept when asked for")
}

// A message's flags are recorded when it has any of wsfan's own (not a
// snapshot's mark, which is the frame's), after its frame and with its
// time; a private topic's are left out as its frames are.
func TestFlaggedIsRecordedWhenSet(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "rec")
	r, err := record.New(dir, deribit.Protocol(), record.Options{})
	require.NoError(t, err)
	t0 := time.Date(2026, 11, 27, 18, 0, 0, 0, time.UTC)
	frame := func(channel string) []byte {
		return fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"subscription","params":{"channel":%q,"data":{"p":1}}}`, channel)
	}
	for i, m := range []client.Message{
		{Topic: "ticker.BTC-PERPETUAL.raw", Flags: client.FlagSnapshot},
		{Topic: "ticker.BTC-PERPETUAL.raw", Flags: client.FlagReconnected | client.FlagSnapshot},
		{Topic: "ticker.BTC-PERPETUAL.raw", Flags: client.FlagGap | client.FlagStale},
		{Topic: "user.orders.any.any.raw", Flags: client.FlagReconnected},
	} {
		m.RecvTime = t0.Add(time.Duration(i) * time.Millisecond)
		r.FrameRead(conn1, frame(m.Topic), m.RecvTime)
		r.Flagged(m)
	}
	require.NoError(t, r.Close())

	recs, _ := readAll(t, dir, record.Window{})
	var got []string
	for _, rec := range recs {
		got = append(got, fmt.Sprintf("%c %s %d %s", rec.Dir, rec.Topic, rec.Time.Sub(t0).Milliseconds(), rec.Flags))
	}
	assert.Equal(t, []string{
		"R ticker.BTC-PERPETUAL.raw 0 none",
		"R ticker.BTC-PERPETUAL.raw 1 none",
		"F ticker.BTC-PERPETUAL.raw 1 reconnected",
		"R ticker.BTC-PERPETUAL.raw 2 none",
		"F ticker.BTC-PERPETUAL.raw 2 gap|stale",
	}, got)
	m, err := record.ReadManifest(dir)
	require.NoError(t, err)
	assert.EqualValues(t, 2, m.Flagged)
	assert.EqualValues(t, 3, m.Topics["ticker.BTC-PERPETUAL.raw"], "a Flagged record is no frame of the topic")
}

// A segment is aged by the clock the writer ticks by, not by its
// records' times: a feed recorded with times from another clock (a
// replayed feed, a fake clock) stays in one segment, where each flush
// used to rotate it.
func TestSegmentAgedByTheWritersClock(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "rec")
	r, err := record.New(dir, thalex.Protocol(), record.Options{Flush: 5 * time.Millisecond})
	require.NoError(t, err)
	t0 := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	size := func() int64 { return r.Stats().Bytes }
	for i := range 3 {
		before := size()
		r.FrameRead(conn1, note("ticker.BTC-PERPETUAL.raw", i), t0.Add(time.Duration(i)*time.Second))
		require.Eventually(t, func() bool { return size() > before }, 10*time.Second, time.Millisecond, "flushed by a tick")
	}
	require.NoError(t, r.Close())
	assert.Equal(t, 1, r.Stats().Segments)
	all, _ := readAll(t, dir, record.Window{})
	assert.Len(t, all, 3)
}
