//go:build unix

package faultproxy_test

import (
	"errors"
	"syscall"
)

// isReset reports whether err is a connection reset (RST) or its
// consequence, a broken pipe.
func isReset(err error) bool {
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}
