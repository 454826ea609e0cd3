package gethtest

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that the tests leave no goroutine of wsfan's behind.
// go-ethereum leaves two kinds for the life of the process, whatever its
// node's Close: the sender cache's workers (core/sender_cacher.go, a
// package-level cache) and leveldb's memory-pool drain of the in-memory
// database the simulated backend opens.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreTopFunction("github.com/ethereum/go-ethereum/core.(*txSenderCacher).cache"),
		goleak.IgnoreTopFunction("github.com/syndtr/goleveldb/leveldb.(*DB).mpoolDrain"))
}
