package natsbridge

import (
	"github.com/wsfan/wsfan/pkg/client"
)

// The rest of a client.Holder: a member holds no upstream connection,
// so its state is the group's upstream's as the leader reports it, and
// it neither resubscribes nor resyncs a topic.

var _ client.Holder = (*Member)(nil)

// State is the member's NATS connection's state while it is not
// connected; once it is, the group's upstream state as the leader
// reports it (Status.Upstream: the leader's own upstream, for the
// leader), client.StateReconnecting while no report arrived within the
// lease TTL (a takeover under way, or the leader unheard).
func (m *Member) State() client.State {
	switch {
	case m.nc.IsClosed():
		return client.StateClosed
	case !m.nc.IsConnected():
		return client.StateReconnecting
	}
	reported := m.Status().Upstream
	for _, st := range []client.State{client.StateConnected, client.StateConnecting, client.StateReconnecting} {
		if reported == st.String() {
			return st
		}
	}
	return client.StateReconnecting
}

// Events returns a channel on which a member sends nothing: what a
// program behind it reads of the group's upstream is State and Status.
// It is closed by Close.
func (m *Member) Events() <-chan client.Event { return m.events }

// Stale is false: a member does not resubscribe a topic, so none is
// ever stale; Silent says when a topic's messages stopped.
func (m *Member) Stale(string) bool { return false }

// Resync is false: a member cannot ask the leader for a topic's whole
// state again (a sidecar in a group keeps no books).
func (m *Member) Resync(string) bool { return false }
