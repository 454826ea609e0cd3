package deribit_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/pkg/deribit"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// subscribeBatch encodes a subscribe of names with chunk.
func subscribeBatch(t *testing.T, names []string, chunk int) *protocol.Batch {
	t.Helper()
	p := deribit.Protocol()
	topics := make([]*protocol.Topic, len(names))
	for i, name := range names {
		topic, err := p.NewTopic(name)
		require.NoError(t, err)
		topics[i] = topic
	}
	var b protocol.Batch
	var id uint64
	p.Subscribe(&b, topics, func() uint64 { id++; return id }, chunk)
	return &b
}

// 1,000 channels go out as requests of at most MaxChannels channels and
// MaxFrameBytes bytes, every channel once; long channel names are split by
// size before the count is reached; WithResubscribeChunk's count applies,
// and the frame cap still holds.
func TestSubscribeKeepsDeribitRequestLimits(t *testing.T) {
	short := make([]string, 1000)
	long := make([]string, 1000)
	for i := range short {
		short[i] = fmt.Sprintf("book.BTC-%d-C.100ms", i)
		long[i] = fmt.Sprintf("trades.option.BTC-27DEC26-%06d-%s.100ms", i, strings.Repeat("C", 120))
	}
	for _, tc := range []struct {
		name       string
		names      []string
		chunk      int
		maxPerCall int
	}{
		{"short names", short, 0, deribit.MaxChannels},
		{"long names", long, 0, deribit.MaxChannels},
		{"chunk 100", short, 100, 100},
		{"chunk 1000, long names", long, 1000, 1000},
	} {
		b := subscribeBatch(t, tc.names, tc.chunk)
		var all []string
		for i, m := range b.Messages {
			assert.LessOrEqual(t, len(m), deribit.MaxFrameBytes, "%s: frame %d", tc.name, i)
			assert.LessOrEqual(t, len(b.Requests[i].Topics), tc.maxPerCall, "%s: request %d", tc.name, i)
			for _, topic := range b.Requests[i].Topics {
				all = append(all, topic.Name)
			}
		}
		assert.Equal(t, tc.names, all, "%s: every channel once, in order", tc.name)
	}
	assert.Len(t, subscribeBatch(t, short, 0).Messages, 4, "1,000 short channels: 4 requests of 250")
	assert.Greater(t, len(subscribeBatch(t, long, 0).Messages), 4, "long channels: split by size")
}
