package reliability_test

import (
	"testing"

	"github.com/wsfan/wsfan/internal/faultproxy"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	var ignore []goleak.Option
	for _, f := range faultproxy.Stranded {
		ignore = append(ignore, goleak.IgnoreTopFunction(f))
	}
	goleak.VerifyTestMain(m, ignore...)
}
