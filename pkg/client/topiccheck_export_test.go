package client

import (
	"testing"

	"github.com/wsfan/wsfan/pkg/protocol"
)

// CountClashChecks has check called with each topic a clash check
// (clashesLocked) looks at, in every client of the test binary, until t
// ends: a test counts the checks a subscribe makes by the topics its
// own dialect parsed.
func CountClashChecks(t testing.TB, check func(*protocol.Topic)) {
	clashChecked.Store(&check)
	t.Cleanup(func() { clashChecked.Store(nil) })
}
