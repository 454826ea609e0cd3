package ethereum

import (
	"encoding/json"
	"fmt"
	"sync"

	"github.com/wsfan/wsfan/internal/chain"
	"github.com/wsfan/wsfan/internal/jsonscan"
)

// A node reorganises its chain: blocks it announced stop being canonical,
// replaced by others at the same heights. geth then announces the new
// head on newHeads, whose parentHash is not the previous head's hash, and
// re-sends the logs of the replaced blocks with "removed": true
// (core/types/log.go, eth/filters/api.go). The client flags such a head
// client.FlagReorg (with a client.Reorg event); Chain is a program's own
// follower, to ask whether a block it acted on is still canonical.

// Block is a block of the chain: its height and hash.
type Block struct {
	Number uint64
	Hash   string
}

// Reorg is a reorganisation a head showed.
type Reorg struct {
	// Replaced are the blocks no longer canonical, oldest first; Depth
	// is how many.
	Replaced []Block
	Depth    int
	// Deep is true when the new head's parent is older than the heads
	// kept: more may have been replaced than Replaced lists.
	Deep bool
}

// Chain follows a node's canonical chain from its newHeads payloads,
// keeping the last heads. It is safe for concurrent use.
type Chain struct {
	mu sync.Mutex
	f  *chain.Follower
}

// NewChain returns a Chain keeping the last keep heads (at least 2).
func NewChain(keep int) *Chain { return &Chain{f: chain.New(keep)} }

// Apply takes a newHeads payload as the chain's new head and returns the
// reorganisation it shows, or nil.
func (c *Chain) Apply(data []byte) (*Reorg, error) {
	l, ok := headLink(data)
	if !ok {
		return nil, fmt.Errorf("ethereum head: no number, hash and parentHash in %.60s", data)
	}
	c.mu.Lock()
	out := c.f.Apply(l)
	c.mu.Unlock()
	if !out.Reorg {
		return nil, nil
	}
	r := &Reorg{Depth: len(out.Replaced), Deep: out.Deep}
	for _, old := range out.Replaced {
		r.Replaced = append(r.Replaced, Block{Number: old.Number, Hash: old.Hash})
	}
	return r, nil
}

// Canonical reports whether the block of number and hash is on the chain
// as followed; known is false when number is outside the heads kept.
func (c *Chain) Canonical(number uint64, hash string) (canonical, known bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.f.Canonical(number, hash)
}

// Link implements protocol.Chaining: a newHeads payload's number, hash
// and parentHash.
func (dialect) Link(data []byte) (number uint64, hash, parent string, ok bool) {
	l, ok := headLink(data)
	return l.Number, l.Hash, l.Parent, ok
}

// headLink reads a head's number, hash and parentHash.
func headLink(data []byte) (chain.Link, bool) {
	var l chain.Link
	var haveNumber bool
	m := jsonscan.Object(data, 0)
	for {
		key, start, more := m.Next()
		if !more {
			break
		}
		end := m.Skip()
		v := data[start:end]
		switch string(key) {
		case "number":
			n, err := parseQuantity(v)
			l.Number, haveNumber = n, err == nil
		case "hash":
			_ = json.Unmarshal(v, &l.Hash)
		case "parentHash":
			_ = json.Unmarshal(v, &l.Parent)
		}
	}
	return l, haveNumber && l.Hash != "" && l.Parent != ""
}

// Retracted implements protocol.Retracting: a log sent again with
// "removed": true, its block replaced by a reorganisation.
func (dialect) Retracted(data []byte) bool {
	m := jsonscan.Object(data, 0)
	for {
		key, start, more := m.Next()
		if !more {
			return false
		}
		end := m.Skip()
		if string(key) == "removed" {
			return string(data[start:end]) == "true"
		}
	}
}
