package natstest

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/wsfan/wsfan/internal/faultproxy"
)

// TestMain checks for leaked goroutines, but for those Toxiproxy is known
// to strand when a toxic is removed from a connection that has died.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m, faultproxy.IgnoreStranded()...) }
