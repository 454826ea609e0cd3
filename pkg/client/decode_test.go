package client_test

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/thalex"
)

type heldValue struct {
	ID  string `json:"id"`
	Pad string `json:"-"`
}

// TestDecodedValuesPinNothing holds 20,000 values decoded from ~1 KiB
// frames: with Decode the heap stays within 2x of the same values decoded
// by encoding/json (no read slab pinned), while DecodeZeroCopy pins the
// slabs.
func TestDecodedValuesPinNothing(t *testing.T) {
	const n = 20_000
	srv := newServer(t, thalex.Name)
	c := dial(t, srv, dialects[0].proto(), client.Overflow(client.Block))
	sub, err := c.Subscribe(testutil.Context(t), []string{"ticker.A.raw"})
	require.NoError(t, err)
	pad := strings.Repeat("x", 1000)

	// held decodes n fresh messages with decode and returns the heap
	// the decoded values keep alive: the heap while they are held less
	// the heap once they are dropped.
	held := func(decode func(client.Message, *heldValue) error) uint64 {
		go func() {
			for i := range n {
				srv.Publish("ticker.A.raw", fmt.Appendf(nil, `{"id":"v%06d","pad":"%s"}`, i, pad))
			}
		}()
		values := make([]heldValue, n)
		for i := range values {
			require.NoError(t, decode(receive(t, sub), &values[i]))
		}
		holding := heapInUse()
		assert.Equal(t, fmt.Sprintf("v%06d", n-1), values[n-1].ID)
		runtime.KeepAlive(values)
		dropped := heapInUse()
		return holding - min(dropped, holding)
	}
	std := held(func(m client.Message, v *heldValue) error { return json.Unmarshal(m.Data, v) })
	copied := held(func(m client.Message, v *heldValue) error { return m.Decode(v) })
	pinned := held(func(m client.Message, v *heldValue) error { return m.DecodeZeroCopy(v) })
	t.Logf("heap held: encoding/json %d B, Decode %d B, DecodeZeroCopy %d B", std, copied, pinned)
	assert.LessOrEqual(t, copied, 2*std, "Decode keeps read slabs alive")
	assert.Greater(t, pinned, 2*std, "the test cannot tell a pinned slab")
}

func heapInUse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// TestDecodeGeneric: Decode[T] and Warm.
func TestDecodeGeneric(t *testing.T) {
	require.NoError(t, client.Warm(heldValue{}, (*[]heldValue)(nil)))
	require.Error(t, client.Warm(nil))
	v, err := client.Decode[heldValue](client.Message{Data: []byte(`{"id":"a"}`)})
	require.NoError(t, err)
	assert.Equal(t, "a", v.ID)
	_, err = client.Decode[heldValue](client.Message{Data: []byte(`{"id":1}`)})
	assert.Error(t, err)
}

// TestAllEndsWithError: ranging over All yields every message, then the
// error the subscription ended with.
func TestAllEndsWithError(t *testing.T) {
	srv := newServer(t, thalex.Name)
	c := dial(t, srv, dialects[0].proto())
	sub, err := c.Subscribe(testutil.Context(t), []string{"ticker.A.raw"}, client.Buffer(2), client.Overflow(client.CloseSubscription), client.Grace(0))
	require.NoError(t, err)
	srv.Publish("ticker.A.raw", []byte(`{}`))
	srv.Publish("ticker.A.raw", []byte(`{}`))
	require.Eventually(t, func() bool { return len(sub.C()) == 2 }, 5*time.Second, time.Millisecond)
	srv.Publish("ticker.A.raw", []byte(`{}`)) // overflows: the subscription ends slow
	require.Eventually(t, func() bool { return sub.Dropped() == 1 }, 5*time.Second, time.Millisecond)
	var msgs int
	var last error
	for m, err := range sub.All() {
		if err != nil {
			last = err
			continue
		}
		msgs++
		assert.Equal(t, uint64(msgs), m.Seq)
	}
	assert.Equal(t, 2, msgs)
	assert.ErrorIs(t, last, client.ErrSlowConsumer)
}

// TestAllEndsWithErrorAfterErrWasRead: a consumer that took the reason
// from Err still gets it from All; a clean end yields no error, and
// breaking out of the loop leaves the subscription running.
func TestAllEndsWithErrorAfterErrWasRead(t *testing.T) {
	srv := newServer(t, thalex.Name)
	c := dial(t, srv, dialects[0].proto())
	ctx := testutil.Context(t)
	sub, err := c.Subscribe(ctx, []string{"ticker.A.raw"}, client.Buffer(1), client.Overflow(client.CloseSubscription), client.Grace(0))
	require.NoError(t, err)
	srv.Publish("ticker.A.raw", []byte(`{}`))
	srv.Publish("ticker.A.raw", []byte(`{}`))
	require.ErrorIs(t, <-sub.Err(), client.ErrSlowConsumer)
	var seqs []uint64
	var last error
	for m, err := range sub.All() {
		if err != nil {
			last = err
			continue
		}
		seqs = append(seqs, m.Seq)
	}
	assert.Equal(t, []uint64{1}, seqs)
	assert.ErrorIs(t, last, client.ErrSlowConsumer)

	clean, err := c.Subscribe(ctx, []string{"ticker.B.raw"})
	require.NoError(t, err)
	srv.Publish("ticker.B.raw", []byte(`{}`))
	for _, err := range clean.All() {
		require.NoError(t, err)
		break
	}
	requireOpen(t, clean)
	srv.Publish("ticker.B.raw", []byte(`{}`))
	require.Eventually(t, func() bool { return len(clean.C()) == 1 }, 5*time.Second, time.Millisecond)
	require.NoError(t, clean.Unsubscribe(ctx))
	seqs = nil
	for m, err := range clean.All() {
		require.NoError(t, err, "a clean end yields no error")
		seqs = append(seqs, m.Seq)
	}
	assert.Equal(t, []uint64{2}, seqs)
}

// A decode error names the field, the type it wants and what the JSON
// holds, not sonic's raw text.
func TestDecodeErrorNamesTheField(t *testing.T) {
	type stats struct {
		Volume float64 `json:"volume"`
	}
	type ticker struct {
		Price float64 `json:"price"`
		Stats stats   `json:"stats"`
	}
	m := client.Message{Data: []byte(`{"price":68000.5,"stats":{"volume":"a lot"}}`)}
	var tk ticker
	err := m.Decode(&tk)
	var de *client.DecodeError
	require.ErrorAs(t, err, &de)
	assert.Equal(t, "stats.volume", de.Field)
	assert.Equal(t, "float64", de.Want)
	assert.Equal(t, "string", de.Found)
	assert.Contains(t, err.Error(), `field "stats.volume" wants float64, found a JSON string`)
	var typeErr *json.UnmarshalTypeError
	assert.ErrorAs(t, err, &typeErr, "encoding/json's error is wrapped")

	_, err = client.Decode[ticker](client.Message{Data: []byte(`{"price":`)})
	assert.ErrorContains(t, err, "cannot decode into client_test.ticker")
}

// Flags print by name, not as numbers.
func TestFlagsString(t *testing.T) {
	assert.Equal(t, "none", client.Flags(0).String())
	assert.Equal(t, "reconnected|snapshot", (client.FlagReconnected | client.FlagSnapshot).String())
	assert.Equal(t, "gap|stale|Flags(0x80)", (client.FlagGap | client.FlagStale | 0x80).String())
}
