package main

import (
	"context"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestRunOffline runs the example as a user would, against every dialect
// of the embedded exchange, until it has printed a few messages.
func TestRunOffline(t *testing.T) {
	for _, d := range []string{"thalex", "deribit", "ethereum", "ethereal"} {
		t.Run(d, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			defer cancel()
			if err := run(ctx, "", d, "", 3); err != nil {
				t.Fatal(err)
			}
			if ctx.Err() != nil {
				t.Fatal("no messages before the deadline")
			}
		})
	}
}
