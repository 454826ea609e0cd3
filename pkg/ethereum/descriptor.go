package ethereum

import "github.com/wsfan/wsfan/pkg/protocol"

// descriptor is what an Ethereum node is: it takes batches of calls, and the
// dialect decides its error codes (protocol.go, backfill.go), its
// methods (readonly.go), reads its messages (identity.go, copies.go,
// chain.go) and recovers what a reconnect missed (backfill.go).
var descriptor = protocol.Venue{
	MaxBatch:  MaxBatch,
	Errors:    dialect{},
	Methods:   dialect{},
	Messages:  dialect{},
	Recoverer: dialect{},
}

// Venue is an Ethereum node's.
func (dialect) Venue() protocol.Venue { return descriptor }

// Venue is an Ethereum node's.
func (*server) Venue() protocol.Venue { return descriptor }
