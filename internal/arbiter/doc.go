// Package arbiter is the arbitration of one topic's messages arriving
// from several connections, the core that both merging composites
// share: a hot standby's first-arrival merge (pkg/standby: every leg
// carries the topic, the first arrival of each message is delivered
// and the late copies dropped, counted in a Window) and a switch-back's
// seam (pkg/client's handover: the old connection delivers until the
// new one's stream meets it, then the new one alone, a Seam). A pool's
// union (pkg/pool) needs no arbitration: each of its connections
// carries its own topics, and it only gathers their parts into one
// subscription.
//
// Both count identities (a message's identity is a hash of the fields
// its venue documents, client.Identifier): each delivery of an identity
// answers one arrival of it on another connection, so a message a venue
// sends twice on purpose is delivered twice, and a copy never is. Nothing
// here knows a connection, a frame or a goroutine: its callers own the
// locking (a Window is used under its merge's lock; a Seam holds its own)
// and deliver what it decides.
package arbiter
