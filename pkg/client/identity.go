package client

import (
	"hash/maphash"

	"github.com/wsfan/wsfan/pkg/protocol"
)

// Identifier hashes what identifies a message within its topic, so the
// same message arriving on two connections is known for one: the
// venue's documented fields (protocol.MessageReader.AppendIdentity), or the whole payload
// where it has none. A standby's merges and a switch-back's handover use
// it. Not safe for concurrent use: each user holds its own, under its
// lock.
type Identifier struct {
	ident   protocol.MessageReader // nil: payloads
	hash    maphash.Hash
	scratch []byte
}

// NewIdentifier returns an identifier of p's messages, hashing with seed
// (one seed for identities that are compared).
func NewIdentifier(p protocol.Protocol, seed maphash.Seed) *Identifier {
	d := new(Identifier)
	d.ident = p.Venue().Messages
	d.hash.SetSeed(seed)
	return d
}

// Of hashes topic and the identity of data within it.
func (d *Identifier) Of(topic string, data []byte) uint64 {
	d.hash.Reset()
	_, _ = d.hash.WriteString(topic)
	_ = d.hash.WriteByte(0)
	if d.ident != nil {
		var ok bool
		if d.scratch, ok = d.ident.AppendIdentity(d.scratch[:0], data); ok {
			_, _ = d.hash.Write(d.scratch)
			return d.hash.Sum64()
		}
	}
	_ = d.hash.WriteByte(1)
	_, _ = d.hash.Write(data)
	return d.hash.Sum64()
}
