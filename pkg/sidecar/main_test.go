package sidecar_test

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if os.Getenv(hopChildEnv) != "" { // the hop benchmark's clients (hop_test.go)
		if err := runHopChild(os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "hop clients:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}
