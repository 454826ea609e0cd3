package sidecar

import "errors"

// Errors say who they are once. ErrClosed, the one sentinel, names the
// package, as sentinels do; every other error says what failed without a
// prefix, since its caller knows whom it called (the sidecar command
// prints its name once before it).

// ErrClosed is returned for work asked of a Server that is closing.
var ErrClosed = errors.New("sidecar: closed")
