package client

import (
	"encoding/hex"

	"go.uber.org/zap"

	"github.com/wsfan/wsfan/internal/chain"
)

// chainKeep is how many heads a chaining topic remembers: a reorg deeper
// than that is still flagged, as deep.
const chainKeep = 64

// followChain adds m, a head of a chaining topic (protocol.MessageReader.Link: an
// Ethereum node's newHeads), to the topic's chain; a head whose parent
// is not the previous head is flagged FlagReorg and raises a Reorg event
// naming the blocks it replaced. A head the chain holds already (a
// backfill's seam) is delivered as it is. It returns the head's number.
func (c *Client) followChain(ts *topicState, m *Message) (uint64, bool) {
	number, hash, parent, ok := c.venue.Messages.Link(m.Data)
	if !ok {
		return 0, false
	}
	if ts.chain == nil {
		ts.chain = chain.New(chainKeep)
	}
	out := ts.chain.Apply(chain.Link{Number: number, Hash: hash, Parent: parent})
	if !out.Reorg {
		return number, true
	}
	m.Flags |= FlagReorg
	replaced := make([]string, len(out.Replaced))
	for i, l := range out.Replaced {
		replaced[i] = "0x" + hex.EncodeToString(l.Hash[:])
	}
	c.log.Info("reorg", zap.String("topic", ts.name), zap.Uint64("head", number), zap.Int("depth", len(replaced)), zap.Bool("deep", out.Deep))
	c.emit(Event{Kind: Reorg, Topic: ts.name, Depth: len(replaced), Replaced: replaced})
	return number, true
}
