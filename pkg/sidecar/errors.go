package sidecar

import "errors"

// Errors say who they are once. ErrClosed, the one sentinel, names the
// package, as sentinels do; every other error says what failed without a
// prefix, since its caller knows whom it called (the sidecar command
// prints its name once before it).

// ErrClosed is returned for work asked of a Server that is closing.
var ErrClosed = errors.New("sidecar: closed")

// Error codes of answers the sidecar makes itself, beside the JSON-RPC
// codes of pkg/protocol.
const (
	codeUpstream = -32000 // the upstream failed the call: timeout, lost connection
	codeBlocked  = -32001 // the method is not forwarded
)
