package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/record"
	"github.com/wsfan/wsfan/pkg/thalex"
)

var topics = []string{"ticker.BTC-PERPETUAL.raw", "ticker.ETH-PERPETUAL.raw"}

// played reads the notifications rec plays.
func played(t testing.TB, rec *recording) []recorded {
	t.Helper()
	var out []recorded
	require.NoError(t, rec.each(func(n recorded) error {
		out = append(out, n)
		return nil
	}))
	return out
}

// received collects what a subscription delivers, per topic.
func received(t *testing.T, sub *client.Subscription, want int) map[string][]string {
	t.Helper()
	got := map[string][]string{}
	timeout := time.After(20 * time.Second)
	for n := 0; n < want; n++ {
		select {
		case m := <-sub.C():
			got[m.Topic] = append(got[m.Topic], string(m.Data))
		case <-timeout:
			t.Fatalf("got %d of %d messages", n, want)
		}
	}
	return got
}

// A recording of a live feed, with a reconnect in it, replayed at
// -speed max into the SDK gives each topic the payloads a live program
// received, byte for byte and in order; a recorded read-only call is
// answered with its recorded result, another with an error saying it is
// not in the recording; a topic never recorded is refused.
func TestReplayGivesWhatWasReceived(t *testing.T) {
	ctx := testutil.Context(t)
	dir := filepath.Join(t.TempDir(), "rec")
	up := exchangetest.NewServer(thalex.Name)
	defer up.Close()
	rec, err := record.New(dir, thalex.Protocol(), record.Options{})
	require.NoError(t, err)
	proto := client.WithProtocol(thalex.Protocol(thalex.WithNotices(false)))
	live, err := client.Dial(ctx, up.URL(), proto, client.WithFrameTap(rec))
	require.NoError(t, err)
	sub, err := live.Subscribe(ctx, topics)
	require.NoError(t, err)
	publish := func(from, to int) {
		for i := from; i < to; i++ {
			up.Publish(topics[i%2], fmt.Appendf(nil, `{"n":%d,"mark_price": %d.5}`, i, 1000+i))
		}
	}
	publish(0, 100)
	first := received(t, sub, 100)
	liveInfo, err := live.CallRaw(ctx, "public/system_info", nil)
	require.NoError(t, err)
	liveInfo = append(json.RawMessage(nil), liveInfo...)
	up.DropConnections()
	for ev := range live.Events() { // the restore is acknowledged: what is published now reaches it
		if ev.Kind == client.Resubscribed {
			break
		}
	}
	publish(100, 200)
	second := received(t, sub, 100)
	require.NoError(t, live.Close())
	require.NoError(t, rec.Close())
	want := map[string][]string{}
	for _, part := range []map[string][]string{first, second} {
		for topic, data := range part {
			want[topic] = append(want[topic], data...)
		}
	}

	loaded, err := load(dir, record.Window{})
	require.NoError(t, err)
	assert.ElementsMatch(t, topics, loaded.topics)
	srv := exchangetest.NewServer(thalex.Name, exchangetest.WithTopics(loaded.topics...))
	defer srv.Close()
	loaded.serveCalls(srv)
	played := make(chan int, 1)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		n, _ := loaded.play(ctx, srv, 0, 50*time.Millisecond)
		played <- n
	}()
	defer wg.Wait()

	replayed, err := client.Dial(ctx, srv.URL(), proto)
	require.NoError(t, err)
	defer replayed.Close()
	rsub, err := replayed.Subscribe(ctx, topics)
	require.NoError(t, err)
	got := received(t, rsub, 200)
	assert.Equal(t, 200, <-played)
	for _, topic := range topics {
		assert.Equal(t, want[topic], got[topic], topic)
	}

	res, err := replayed.CallRaw(ctx, "public/system_info", nil)
	require.NoError(t, err)
	assert.JSONEq(t, string(liveInfo), string(res), "the recorded answer")
	_, err = replayed.CallRaw(ctx, "public/system_info", json.RawMessage(`{"other":1}`))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not in the recording")
	_, err = replayed.Subscribe(ctx, []string{"ticker.SOL-PERPETUAL.raw"})
	require.Error(t, err, "a topic never recorded is refused")
}

// -speed 1 paces by the recorded offsets: the replay of frames recorded
// 300 ms apart takes about as long (checked loosely: pacing only delays),
// and -speed 10 ten times less.
func TestReplayPacesByReceiveTime(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "rec")
	rec, err := record.New(dir, thalex.Protocol(), record.Options{})
	require.NoError(t, err)
	t0 := time.Now()
	for i := range 4 {
		rec.FrameRead(client.ConnInfo{Client: 1, Conn: 1}, fmt.Appendf(nil, `{"channel_name":"a.b","notification":%d}`, i), t0.Add(time.Duration(i)*100*time.Millisecond))
	}
	rec.FrameWritten(client.ConnInfo{Client: 1, Conn: 1}, []byte(`{"jsonrpc":"2.0","id":1,"method":"public/subscribe","params":{"channels":["a.b"]}}`), t0)
	require.NoError(t, rec.Close())
	loaded, err := load(dir, record.Window{})
	require.NoError(t, err)
	notes := played(t, loaded)
	require.Len(t, notes, 4)
	assert.Equal(t, 300*time.Millisecond, notes[3].at)

	for _, speed := range []float64{1, 10} {
		srv := exchangetest.NewServer(thalex.Name, exchangetest.WithTopics(loaded.topics...))
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		c, err := client.Dial(ctx, srv.URL(), client.WithProtocol(thalex.Protocol(thalex.WithNotices(false))))
		require.NoError(t, err)
		sub, err := c.Subscribe(ctx, []string{"a.b"})
		require.NoError(t, err)
		start := time.Now()
		n, err := loaded.play(ctx, srv, speed, 0)
		require.NoError(t, err)
		assert.Equal(t, 4, n)
		assert.GreaterOrEqual(t, time.Since(start), time.Duration(float64(300*time.Millisecond)/speed))
		for range 4 {
			m := <-sub.C()
			assert.True(t, strings.HasPrefix(string(m.Data), "0") || len(m.Data) == 1)
		}
		_ = c.Close()
		srv.Close()
		cancel()
	}
}

// The command's flags: -inspect prints the manifest, -export ndjson the
// window's frames, a bad -speed or -from is refused naming what it wants.
func TestCommandLine(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "rec")
	rec, err := record.New(dir, thalex.Protocol(), record.Options{})
	require.NoError(t, err)
	t0 := time.UnixMilli(1_800_000_000_000)
	for i := range 10 {
		rec.FrameRead(client.ConnInfo{Client: 1, Conn: 1}, fmt.Appendf(nil, `{"channel_name":"a.b","notification":%d}`, i), t0.Add(time.Duration(i)*time.Millisecond))
	}
	require.NoError(t, rec.Close())

	var out strings.Builder
	require.NoError(t, run([]string{"-dir", dir, "-inspect"}, &out))
	assert.Contains(t, out.String(), `"venue": "thalex"`)
	out.Reset()
	require.NoError(t, run([]string{"-dir", dir, "-export", "ndjson", "-from", "1800000000003", "-to", "1800000000005"}, &out))
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 2)
	assert.Contains(t, lines[0], `"frame":{"channel_name":"a.b","notification":3}`)
	assert.ErrorContains(t, run([]string{"-dir", dir, "-speed", "fast"}, &out), "want 1, a positive factor, or max")
	assert.ErrorContains(t, run([]string{"-dir", dir, "-from", "yesterday"}, &out), "RFC 3339")
}
