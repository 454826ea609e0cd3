package gethtest

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/wsfan/wsfan/internal/faultproxy"
)

// TestMain checks that the tests leave no goroutine of wsfan's behind.
// go-ethereum leaves some for the life of the process, whatever its
// node's Close: the sender cache's workers (core/sender_cacher.go, a
// package-level cache), leveldb's memory-pool drain of the database the
// simulated backend opens, and a subscription's goroutine of its filter
// API still unsubscribing from the event system the node stopped
// (eth/filters/api.go, filter_system.go). The tests reset links through
// Toxiproxy (faultproxy.Proxy.ResetPeer), which strands a goroutine or
// two of its own now and then (faultproxy.Stranded: in about 1 run in
// 150 of TestStandbyOnGethLosesNoHead).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, append(faultproxy.IgnoreStranded(),
		goleak.IgnoreTopFunction("github.com/ethereum/go-ethereum/core.(*txSenderCacher).cache"),
		goleak.IgnoreTopFunction("github.com/syndtr/goleveldb/leveldb.(*DB).mpoolDrain"),
		goleak.IgnoreAnyFunction("github.com/ethereum/go-ethereum/eth/filters.(*FilterAPI).NewHeads.func1"),
		goleak.IgnoreAnyFunction("github.com/ethereum/go-ethereum/eth/filters.(*FilterAPI).Logs.func1"))...)
}
