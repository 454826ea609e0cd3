// Package chain follows a chain of blocks by their hashes: the last few
// links, each naming its parent, so that a block whose parent is not the
// tip tells a reorganisation (the blocks it replaced) from an extension.
// pkg/client uses it to flag reorgs on a node's newHeads, and
// pkg/ethereum's Chain is a program's own follower.
package chain

// Hash is a block's hash: 32 bytes.
type Hash [32]byte

// Link is one block: its height, its hash and its parent's.
type Link struct {
	Number       uint64
	Hash, Parent Hash
}

// Follower keeps the last links of the canonical chain, oldest first. The
// zero value keeps none; use New. It is not safe for concurrent use.
type Follower struct {
	keep  int
	links []Link
}

// New returns a follower keeping the last keep links (at least 2).
func New(keep int) *Follower { return &Follower{keep: max(keep, 2)} }

// Outcome is what a link did to the chain.
type Outcome struct {
	// Reorg is true when the link replaced blocks of the chain: those in
	// Replaced, oldest first (empty when the link repeats a height whose
	// block the follower did not hold).
	Reorg    bool
	Replaced []Link
	// Deep is true when the link's parent is none of the links kept: the
	// reorganisation went deeper than the follower remembers, and the
	// chain starts over from the link.
	Deep bool
	// Repeat is true when the link is one the chain holds already.
	Repeat bool
}

// Apply adds l as the chain's new tip and says what it replaced.
func (f *Follower) Apply(l Link) Outcome {
	n := len(f.links)
	switch {
	case n == 0:
		f.push(l)
		return Outcome{}
	case l.Parent == f.links[n-1].Hash:
		f.push(l)
		return Outcome{}
	}
	for i := n - 1; i >= 0; i-- {
		switch f.links[i].Hash {
		case l.Hash:
			return Outcome{Repeat: true}
		case l.Parent:
			replaced := append([]Link(nil), f.links[i+1:]...)
			f.links = f.links[:i+1]
			f.push(l)
			return Outcome{Reorg: true, Replaced: replaced}
		}
	}
	// The parent is unknown: a reorganisation deeper than the links kept
	// when the link is no higher than the tip, else a jump (links were
	// missed): either way the chain starts over from l.
	tip := f.links[n-1]
	var out Outcome
	if l.Number <= tip.Number {
		out = Outcome{Reorg: true, Deep: true}
		for _, old := range f.links {
			if old.Number >= l.Number {
				out.Replaced = append(out.Replaced, old)
			}
		}
	}
	f.links = f.links[:0]
	f.push(l)
	return out
}

// push appends l, dropping the oldest link beyond keep.
func (f *Follower) push(l Link) {
	if len(f.links) == f.keep {
		copy(f.links, f.links[1:])
		f.links = f.links[:len(f.links)-1]
	}
	f.links = append(f.links, l)
}

// Canonical reports whether the block of number and hash is on the chain
// as followed: known is false when number is outside the links kept.
func (f *Follower) Canonical(number uint64, hash Hash) (canonical, known bool) {
	for _, l := range f.links {
		if l.Number == number {
			return l.Hash == hash, true
		}
	}
	return false, false
}

// Tip returns the chain's newest link; ok is false before the first.
func (f *Follower) Tip() (Link, bool) {
	if len(f.links) == 0 {
		return Link{}, false
	}
	return f.links[len(f.links)-1], true
}
