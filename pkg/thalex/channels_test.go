package thalex_test

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// The API specification's private subscriptions go out with
// private/subscribe, the public ones with public/subscribe; one
// unsubscribe takes both, as the specification's only unsubscribe method.
func TestChannelsAsTheSpecSays(t *testing.T) {
	p, w := thalex.Protocol(), thalex.Server()
	private := []string{"account.orders", "account.conditional_orders", "account.bots", "session.orders",
		"session.mm_protection", "mm.rfqs", "mm.rfq_quotes", "user.inbox_notifications"}
	public := []string{"ticker.BTC-PERPETUAL.raw", "book.BTC-PERPETUAL.none.10.100ms", "instruments", "system", "rfqs"}
	var topics []*protocol.Topic
	for _, name := range append(append([]string{}, public...), private...) {
		topic, err := p.NewTopic(name)
		require.NoError(t, err)
		assert.Equal(t, slices.Contains(private, name), topic.Private, name)
		assert.Equal(t, topic.Private, w.Private(name), "both halves agree on %s", name)
		topics = append(topics, topic)
	}
	var id uint64
	next := func() uint64 { id++; return id }
	var b protocol.Batch
	p.Subscribe(&b, topics, next, 0)
	require.Len(t, b.Messages, 2)
	assert.Contains(t, string(b.Messages[0]), `"method":"public/subscribe"`)
	assert.Contains(t, string(b.Messages[1]), `"method":"private/subscribe"`)

	b.Reset()
	keys := make([]string, len(topics))
	for i, topic := range topics {
		keys[i] = topic.Key
	}
	p.Unsubscribe(&b, topics, keys, next, 0)
	require.Len(t, b.Messages, 1, "public and private channels in one unsubscribe")
	assert.Contains(t, string(b.Messages[0]), `"method":"unsubscribe"`)
	reqs, _, err := w.ParseFrame(nil, b.Messages[0])
	require.Nil(t, err)
	assert.Equal(t, protocol.OpUnsubscribe, reqs[0].Op)
	assert.Len(t, reqs[0].Topics, len(topics))

	// The specification has no public/unsubscribe: a call, not an unsubscribe.
	reqs, _, err = w.ParseFrame(nil, []byte(`{"id":1,"method":"public/unsubscribe","params":{"channels":["instruments"]}}`))
	require.Nil(t, err)
	assert.Equal(t, protocol.OpCall, reqs[0].Op)
}
