package book_test

import (
	"testing"

	"go.uber.org/goleak"
)

// Followers start goroutines: every test must leave none behind.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
