package reliability_test

import (
	"testing"

	"github.com/wsfan/wsfan/internal/faultproxy"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction(faultproxy.StrandedLatency))
}
