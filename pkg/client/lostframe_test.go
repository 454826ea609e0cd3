package client_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/deribit"
)

// A notification dropped for its size is not lost silently: its topic's
// next message is flagged FlagGap and a Gap event names the topic; the
// other topics see nothing.
func TestOversizedFrameMarksItsTopic(t *testing.T) {
	srv := newServer(t, deribit.Name)
	c := dial(t, srv, deribit.Protocol(), client.WithReadLimit(1024))
	ctx := testutil.Context(t)
	a, err := c.Subscribe(ctx, []string{"ticker.A.100ms"})
	require.NoError(t, err)
	b, err := c.Subscribe(ctx, []string{"ticker.B.100ms"})
	require.NoError(t, err)

	srv.Publish("ticker.A.100ms", []byte(`{"pad":"`+strings.Repeat("x", 4096)+`"}`))
	srv.Publish("ticker.A.100ms", []byte(`{"n":2}`))
	srv.Publish("ticker.B.100ms", []byte(`{"n":1}`))
	m := <-a.C()
	assert.Equal(t, `{"n":2}`, string(m.Data))
	assert.True(t, m.Gap(), "the message after the dropped one is flagged")
	assert.False(t, (<-b.C()).Gap())
	for ev := range c.Events() {
		if ev.Kind == client.Gap {
			assert.Equal(t, "ticker.A.100ms", ev.Topic)
			break
		}
	}
}
