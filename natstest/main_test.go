package natstest

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/wsfan/wsfan/internal/faultproxy"
)

// TestMain checks for leaked goroutines, but for those Toxiproxy is known
// to strand when a toxic is removed from a connection that has died
// (faultproxy.Stranded).
func TestMain(m *testing.M) {
	var ignore []goleak.Option
	for _, f := range faultproxy.Stranded {
		ignore = append(ignore, goleak.IgnoreTopFunction(f))
	}
	goleak.VerifyTestMain(m, ignore...)
}
