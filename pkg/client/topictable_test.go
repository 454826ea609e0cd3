package client

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/wsfan/wsfan/pkg/protocol"
)

// Removing swaps the last topic into the hole; every topic keeps its
// index right, so later removals find it.
func TestTopicTableRemoveKeepsIndexes(t *testing.T) {
	var table topicTable
	states := map[string]*topicState{}
	for _, name := range []string{"ticker.A.raw", "ticker.B.raw", "ticker.C.raw", "ticker.D.raw"} {
		states[name] = newTopicState(&protocol.Topic{Name: name, Key: name})
		table.add(states[name])
	}

	table.remove(states["ticker.B.raw"]) // middle: D moves into its place
	table.remove(states["ticker.D.raw"]) // the moved one
	table.remove(states["ticker.C.raw"]) // now the last

	assert.Equal(t, 1, table.len())
	assert.Nil(t, table.get("ticker.B.raw"))
	assert.Same(t, states["ticker.A.raw"], table.get("ticker.A.raw"))
	assert.Equal(t, []*topicState{states["ticker.A.raw"]}, table.all())
	for i, ts := range table.all() {
		assert.Equal(t, i, ts.index)
	}
}
