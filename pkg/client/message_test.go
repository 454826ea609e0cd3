package client_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/testutil"
)

// A message's Place is what the client read to check its topic's order:
// a book change's id, a head's block number; a topic without one has
// none.
func TestMessagePlace(t *testing.T) {
	t.Run("book", func(t *testing.T) {
		tc := gapCases[0] // Deribit's book
		srv := newServer(t, tc.server)
		c := dial(t, srv, tc.proto(), fastBackoff())
		ctx := testutil.Context(t)
		book, err := c.Subscribe(ctx, []string{tc.book})
		require.NoError(t, err)
		ticker, err := c.Subscribe(ctx, []string{tc.other})
		require.NoError(t, err)
		require.NoError(t, srv.WaitSubscribers(ctx, tc.book, 1))
		require.NoError(t, srv.WaitSubscribers(ctx, tc.other, 1))
		srv.Publish(tc.book, tc.update(100, 0))
		srv.Publish(tc.book, tc.update(101, 100))
		for _, want := range []uint64{100, 101} {
			pos, ok := receive(t, book).Place()
			assert.True(t, ok)
			assert.Equal(t, want, pos)
		}
		srv.Publish(tc.other, []byte(`{"timestamp":1}`))
		_, ok := receive(t, ticker).Place()
		assert.False(t, ok, "a ticker has no place")
	})
	t.Run("heads", func(t *testing.T) {
		d := dialects[2] // Ethereum
		srv := newServer(t, d.server)
		c := dial(t, srv, d.proto(), fastBackoff())
		ctx := testutil.Context(t)
		heads, err := c.Subscribe(ctx, []string{"newHeads"})
		require.NoError(t, err)
		require.NoError(t, srv.WaitSubscribers(ctx, "newHeads", 1))
		for n := 7; n <= 8; n++ {
			srv.Publish("newHeads", fmt.Appendf(nil, `{"number":"0x%x","hash":"0x%064x","parentHash":"0x%064x"}`, n, n+1, n))
			pos, ok := receive(t, heads).Place()
			assert.True(t, ok)
			assert.Equal(t, uint64(n), pos)
		}
	})
}
