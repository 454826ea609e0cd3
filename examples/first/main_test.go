package main

import (
	"testing"

	"go.uber.org/goleak"
)

// The README's first program runs as printed there.
func TestFirstProgram(t *testing.T) {
	defer goleak.VerifyNone(t)
	main()
}
