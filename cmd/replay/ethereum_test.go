package main

import (
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/ethereum"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/record"
)

// An Ethereum recording replays to a program that subscribes anew: each
// notification carries the replaying connection's own subscription id
// in place of the recorded one, and the heads are those received live.
func TestEthereumReplayRewritesSubscriptionIDs(t *testing.T) {
	ctx := testutil.Context(t)
	dir := filepath.Join(t.TempDir(), "rec")
	up := exchangetest.NewServer(ethereum.Name)
	defer up.Close()
	rec, err := record.New(dir, ethereum.Protocol(), record.Options{})
	require.NoError(t, err)
	live, err := client.Dial(ctx, up.URL(), client.WithProtocol(ethereum.Protocol()), client.WithFrameTap(rec))
	require.NoError(t, err)
	sub, err := live.Subscribe(ctx, []string{"newHeads"})
	require.NoError(t, err)
	var want []string
	for i := range 20 {
		up.Publish("newHeads", fmt.Appendf(nil, `{"number":"0x%x","hash":"0x%064x"}`, 100+i, i))
		want = append(want, string((<-sub.C()).Data))
	}
	require.NoError(t, live.Close())
	require.NoError(t, rec.Close())

	loaded, err := load(dir, record.Window{})
	require.NoError(t, err)
	notes := played(t, loaded)
	require.Len(t, notes, 20)
	assert.Equal(t, "newHeads", notes[0].topic, "the recorded id is known as newHeads'")
	srv := exchangetest.NewServer(ethereum.Name, exchangetest.WithTopics(loaded.topics...))
	defer srv.Close()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, _ = loaded.play(ctx, srv, 0, 50*time.Millisecond)
	}()
	defer wg.Wait()
	replayed, err := client.Dial(ctx, srv.URL(), client.WithProtocol(ethereum.Protocol()))
	require.NoError(t, err)
	defer replayed.Close()
	rsub, err := replayed.Subscribe(ctx, []string{"newHeads"})
	require.NoError(t, err)
	var got []string
	for range 20 {
		select {
		case m := <-rsub.C():
			got = append(got, string(m.Data))
		case <-time.After(10 * time.Second):
			t.Fatalf("got %d of 20 heads", len(got))
		}
	}
	assert.Equal(t, want, got)
}
