package standby

import (
	"time"

	"github.com/wsfan/wsfan/pkg/client"
)

// A leg that failed over to another endpoint (client.WithEndpoints)
// goes back to its own by reconnecting (client.Leg.SwitchBack), when
// another leg is up to carry the stream meanwhile: the merged stream
// loses nothing. Not while a session setting holds on the leg's
// connection: cancel-on-disconnect would cancel the orders placed on it. A leg never takes its endpoint back by itself
// (client.AsLeg): the Standby does, one leg at a time.

// switchBacks is a Standby's goroutine taking each leg's own endpoint
// back (see client.WithSwitchBack), until Close. One leg switches at a time, at
// most one an after: a leg that just left reads as connected until its
// connection has wound down, and must not count as the other leg up.
func (sb *Standby) switchBacks(every, after time.Duration) {
	defer sb.wg.Done()
	tick := time.NewTicker(every)
	defer tick.Stop()
	answering := make([]time.Time, len(sb.legs)) // since when leg i's endpoint answered every probe
	var lastSwitch time.Time
	for {
		select {
		case <-sb.ctx.Done():
			return
		case now := <-tick.C:
			for i, c := range sb.ctl {
				if c.OnPreferred() || !c.Probe(sb.ctx) {
					answering[i] = time.Time{}
					continue
				}
				if answering[i].IsZero() {
					answering[i] = now
				}
				if now.Sub(answering[i]) >= after && now.Sub(lastSwitch) >= after && sb.otherUp(i) {
					if c.SwitchBack() {
						lastSwitch = now
					}
					answering[i] = time.Time{} // refused (a session setting holds): asked again an after later
				}
			}
		}
	}
}

// otherUp reports whether a leg other than leg is up: connected, its
// subscriptions restored.
func (sb *Standby) otherUp(leg int) bool {
	for j, c := range sb.legs {
		if j != leg && c.State() == client.StateConnected && sb.health[j].upSince.Load() != 0 {
			return true
		}
	}
	return false
}
