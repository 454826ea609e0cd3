package reliability_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/wsfan/wsfan/internal/faultproxy"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m, faultproxy.IgnoreStranded()...) }
