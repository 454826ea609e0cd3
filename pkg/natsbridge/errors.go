package natsbridge

import "errors"

// Sentinel errors. Errors from the upstream keep pkg/client's sentinels
// (client.ErrConnectionLost, client.ErrTimeout, client.ErrRefused) and
// *client.RPCError, also when they come back from the leader.
var (
	// ErrClosed: the member was closed.
	ErrClosed = errors.New("natsbridge: member closed")
	// ErrUnknownGroup: a member that is not a candidate joined a group
	// that no candidate ever created.
	ErrUnknownGroup = errors.New("natsbridge: unknown group")
	// ErrNoLeader: no member led the group for the whole time a call
	// waited for one.
	ErrNoLeader = errors.New("natsbridge: no leader")
	// ErrMethodNotAllowed: the leader's call policy refused the method.
	ErrMethodNotAllowed = errors.New("natsbridge: method not allowed")
	// ErrBusy: the leader had too many calls in flight.
	ErrBusy = errors.New("natsbridge: leader busy")
)
