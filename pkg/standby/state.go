package standby

import (
	"time"

	"github.com/wsfan/wsfan/pkg/client"
)

// What a Standby tells of its legs, each answer over them as one
// upstream: the merged stream is up while any leg is, and quiet only
// when every leg is.

// Lag is the least ping round trip (client.Client.Lag) of the connected legs,
// the first leg's when none is.
func (sb *Standby) Lag() time.Duration {
	least := time.Duration(-1)
	for _, c := range sb.legs {
		if c.State() == client.StateConnected && (least < 0 || c.Lag() < least) {
			least = c.Lag()
		}
	}
	if least < 0 {
		return sb.legs[0].Lag()
	}
	return least
}

// Endpoint is the endpoint of the first connected leg (the first leg's
// when none is), redacted, and its index among Dial's URL and
// WithEndpoints' (client.Client.Endpoint).
func (sb *Standby) Endpoint() (url string, index int) {
	for _, c := range sb.legs {
		if c.State() == client.StateConnected {
			return c.Endpoint()
		}
	}
	return sb.legs[0].Endpoint()
}

// Stale reports whether topic is stale on every connected leg
// (client.Client.Stale): a leg that still carries it keeps the merged stream
// fresh. With no leg connected, the first leg's answer.
func (sb *Standby) Stale(topic string) bool { return sb.every(topic, (*client.Client).Stale) }

// Silent reports whether topic is silent beyond its stale limit on every
// connected leg (client.Client.Silent).
func (sb *Standby) Silent(topic string) bool { return sb.every(topic, (*client.Client).Silent) }

// every reports whether quiet holds for topic on every connected leg, or
// on the first leg when none is connected.
func (sb *Standby) every(topic string, quiet func(*client.Client, string) bool) bool {
	connected := false
	for _, c := range sb.legs {
		if c.State() != client.StateConnected {
			continue
		}
		connected = true
		if !quiet(c, topic) {
			return false
		}
	}
	return connected || quiet(sb.legs[0], topic)
}

// Resync asks every leg for topic's whole state again (client.Client.Resync);
// the merge delivers the first snapshot to arrive and drops the others'
// copies. It reports whether any leg could.
func (sb *Standby) Resync(topic string) bool {
	asked := false
	for _, c := range sb.legs {
		asked = c.Resync(topic) || asked
	}
	return asked
}
