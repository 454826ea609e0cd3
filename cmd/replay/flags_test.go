package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/sidecartest"
	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/record"
	"github.com/wsfan/wsfan/pkg/sidecar"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// flagged is a message as a program got it: its payload and its flags.
type flagged struct {
	Data  string
	Flags client.Flags
}

// program subscribes an SDK client at url to topics and returns a
// function reading messages until each topic's payload holds last.
func program(t *testing.T, ctx context.Context, url string) func(last string) map[string][]flagged {
	t.Helper()
	c, err := client.Dial(ctx, url, client.WithProtocol(thalex.Protocol(thalex.WithNotices(false))))
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	sub, err := c.Subscribe(ctx, topics)
	require.NoError(t, err)
	got := map[string][]flagged{}
	return func(last string) map[string][]flagged {
		done := map[string]bool{}
		timeout := time.After(20 * time.Second)
		for len(done) < len(topics) {
			select {
			case m := <-sub.C():
				got[m.Topic] = append(got[m.Topic], flagged{string(m.Data), m.Flags})
				if strings.Contains(string(m.Data), last) {
					done[m.Topic] = true
				}
			case <-timeout:
				t.Fatalf("waiting for %s: have %v", last, got)
			}
		}
		return got
	}
}

// holes lists the flags of a program's messages that have any.
func holes(got map[string][]flagged) []string {
	var out []string
	for _, topic := range topics {
		for i, m := range got[topic] {
			if m.Flags != 0 {
				out = append(out, fmt.Sprintf("%s #%d %s", topic, i, m.Flags))
			}
		}
	}
	return out
}

// A sidecar with a hot standby records a test venue through a dropped
// frame (over its read limit: a gap), a failover (one leg dropped: the
// other carries on, nothing flagged) and a reconnect (both legs dropped:
// reconnected). Replayed at -speed max into the SDK, and into a program
// behind a sidecar, each topic's messages are the live program's, byte
// for byte and in order (each leg recorded them once: the replay plays
// the first arrivals), with the flags the live program got.
func TestReplayTellsTheRecordedFlags(t *testing.T) {
	ctx := testutil.Context(t)
	dir := filepath.Join(t.TempDir(), "rec")
	up := exchangetest.NewServer(thalex.Name)
	defer up.Close()
	live := sidecartest.Serve(t, sidecar.Config{Upstream: up.URL(), Protocol: "thalex", Record: dir, HotStandby: 1, Grace: 50 * time.Millisecond,
		UpstreamOptions: []client.Option{client.WithReadLimit(2048), client.WithReconnectWait(10*time.Millisecond, 50*time.Millisecond)}})
	require.Eventually(t, live.Ready, 10*time.Second, 5*time.Millisecond)
	read := program(t, ctx, "ws://"+live.Addr+"/ws")
	legsUp := func() {
		for _, topic := range topics {
			require.NoError(t, up.WaitSubscribers(ctx, topic, 2))
		}
	}
	legsUp()
	n := 0
	publish := func(count int) string {
		for range count {
			up.Publish(topics[n%2], fmt.Appendf(nil, `{"n":%d,"mark_price":%d.5}`, n, 1000+n))
			n++
		}
		up.Publish(topics[0], fmt.Appendf(nil, `{"mark":%d}`, n)) // a phase's last, on both topics
		up.Publish(topics[1], fmt.Appendf(nil, `{"mark":%d}`, n))
		return fmt.Sprintf(`{"mark":%d}`, n)
	}
	read(publish(10))

	// A frame over the read limit: dropped, the topic's next message flagged.
	up.Publish(topics[0], fmt.Appendf(nil, `{"pad":"%s"}`, strings.Repeat("x", 4096)))
	read(publish(10))

	// A failover: one leg dropped, the other carries the feed.
	subscribes := up.CountSubscribes(topics[0])
	require.True(t, up.DropConnectionOf(topics[0]))
	read(publish(10))
	require.Eventually(t, func() bool { return up.CountSubscribes(topics[0]) > subscribes }, 10*time.Second, 5*time.Millisecond)
	legsUp()
	read(publish(10))

	// A reconnect: both legs dropped.
	subscribes = up.CountSubscribes(topics[0])
	up.DropConnections()
	require.Eventually(t, func() bool { return up.CountSubscribes(topics[0]) >= subscribes+2 }, 10*time.Second, 5*time.Millisecond)
	legsUp()
	want := read(publish(10))
	live.Stop()
	live.Close()

	lived := holes(want)
	t.Logf("the live program was told: %v", lived)
	require.NotEmpty(t, lived, "the live program was told of holes")
	assert.Contains(t, strings.Join(lived, " "), "gap", "the dropped frame")
	assert.Contains(t, strings.Join(lived, " "), "reconnected", "both legs lost")
	m, err := record.ReadManifest(dir)
	require.NoError(t, err)
	assert.Positive(t, m.Flagged)

	replay := func(t *testing.T, behindSidecar bool) map[string][]flagged {
		loaded, err := load(dir, record.Window{})
		require.NoError(t, err)
		srv := exchangetest.NewServer(thalex.Name, exchangetest.WithTopics(loaded.topics...))
		defer srv.Close()
		var wg sync.WaitGroup
		defer wg.Wait()
		playCtx, stop := context.WithCancel(ctx)
		defer stop()
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = loaded.play(playCtx, srv, 0, 250*time.Millisecond)
		}()
		url := srv.URL()
		if behindSidecar {
			side := sidecartest.Serve(t, sidecar.Config{Upstream: srv.URL(), Protocol: "thalex", Grace: 50 * time.Millisecond})
			require.Eventually(t, side.Ready, 10*time.Second, 5*time.Millisecond)
			url = "ws://" + side.Addr + "/ws"
		}
		return program(t, ctx, url)(fmt.Sprintf(`{"mark":%d}`, n))
	}
	t.Run("sdk", func(t *testing.T) {
		got := replay(t, false)
		assert.Equal(t, want, got)
		assert.Equal(t, lived, holes(got))
	})
	t.Run("behind a sidecar", func(t *testing.T) {
		got := replay(t, true)
		assert.Equal(t, want, got)
		assert.Equal(t, lived, holes(got))
	})
}
