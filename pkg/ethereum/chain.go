package ethereum

import (
	"bytes"
	"encoding/hex"
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

// Block is a block of the chain: its height and hash ("0x…").
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
		r.Replaced = append(r.Replaced, Block{Number: old.Number, Hash: "0x" + hex.EncodeToString(old.Hash[:])})
	}
	return r, nil
}

// Canonical reports whether the block of number and hash is on the chain
// as followed; known is false when number is outside the heads kept.
func (c *Chain) Canonical(number uint64, hash string) (canonical, known bool) {
	var h chain.Hash
	if !hash32([]byte(`"`+hash+`"`), &h) {
		return false, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.f.Canonical(number, h)
}

// Link implements protocol.MessageReader: a newHeads payload's number, hash
// and parentHash, read without allocating. It runs on the reader for
// every head, so it looks the three keys up directly (a header's keys
// are unique and its values hold no objects of their own), and walks the
// object only when one is not found so (spaces around a colon, say).
func (dialect) Link(data []byte) (number uint64, hash, parent [32]byte, ok bool) {
	var l chain.Link
	n, okN := quantity(valueOf(data, keyNumber))
	if okN && hash32(valueOf(data, keyHash), &l.Hash) && hash32(valueOf(data, keyParentHash), &l.Parent) {
		return n, l.Hash, l.Parent, true
	}
	l, ok = headLink(data)
	return l.Number, l.Hash, l.Parent, ok
}

// The keys Link looks up, with their colon and the value's quote, but
// not their opening quote: a search starts from a key's first letter,
// rarer than a quote (which opens every key and value).
var (
	keyNumber     = []byte(`number":"`)
	keyHash       = []byte(`hash":"`)
	keyParentHash = []byte(`parentHash":"`)
)

// valueOf returns the string value right after key (whose opening quote
// it checks) in data, quotes included, or nil.
func valueOf(data, key []byte) []byte {
	for from := 0; ; {
		i := bytes.Index(data[from:], key)
		if i < 0 {
			return nil
		}
		i += from
		if i == 0 || data[i-1] != '"' {
			from = i + 1
			continue
		}
		v := data[i+len(key)-1:]
		end := bytes.IndexByte(v[1:], '"')
		if end < 0 {
			return nil
		}
		return v[:end+2]
	}
}

// headLink reads a head's number, hash and parentHash.
func headLink(data []byte) (chain.Link, bool) {
	var l chain.Link
	var haveNumber, haveHash, haveParent bool
	m := jsonscan.Object(data, 0)
	for !(haveNumber && haveHash && haveParent) {
		key, start, more := m.Next()
		if !more {
			break
		}
		end := m.Skip()
		v := data[start:end]
		switch string(key) {
		case "number":
			n, ok := quantity(v)
			l.Number, haveNumber = n, ok
		case "hash":
			haveHash = hash32(v, &l.Hash)
		case "parentHash":
			haveParent = hash32(v, &l.Parent)
		}
	}
	return l, haveNumber && haveHash && haveParent
}

// hash32 reads a JSON "0x…" string of 32 bytes into dst.
func hash32(v []byte, dst *chain.Hash) bool {
	if len(v) != 2+2+64 || v[0] != '"' || v[len(v)-1] != '"' || v[1] != '0' || v[2] != 'x' {
		return false
	}
	_, err := hex.Decode(dst[:], v[3:len(v)-1])
	return err == nil
}

// Retracted implements protocol.MessageReader: a log sent again with
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
