package standby

import (
	"time"

	"github.com/wsfan/wsfan/pkg/client"
)

// Which leg of a Standby takes calls on a chain (Ethereum): the node
// with the highest head leads, and a node more than client.WithHeadLag blocks
// behind it takes none, so a call never reads a state the others have
// left behind. Each leg's head is the highest it delivered on a chain
// topic (newHeads); with none subscribed, every leg is level.

// legNow is what the choice of a caller reads of a leg.
type legNow struct {
	connected bool
	head      uint64 // client.Leg.Head, while connected
	late      bool   // client.Leg.Late, while connected
}

// caller picks the leg a call goes to, among those not tried (see
// pickCaller), from the legs as they are now.
func (sb *Standby) caller(tried []bool) int {
	legs := make([]legNow, len(sb.legs))
	now := time.Now()
	for i, c := range sb.legs {
		if c.State() == client.StateConnected {
			legs[i] = legNow{connected: true, head: sb.ctl[i].Head(), late: sb.ctl[i].Late(now)}
		}
	}
	return pickCaller(legs, tried, sb.headLag)
}

// pickCaller picks, among the legs not tried: the connected leg with the
// highest head, none more than headLag blocks behind the highest
// connected one, and one whose pongs are late (client.Leg.Late: the link
// may be dying) only when no other can take it; else the first not tried
// that is not connected (whose call fails at once, naming why); -1 when
// none is left.
func pickCaller(legs []legNow, tried []bool, headLag int) int {
	var top uint64
	for _, l := range legs {
		if l.connected {
			top = max(top, l.head)
		}
	}
	best, fallback := -1, -1
	for i, l := range legs {
		if tried[i] {
			continue
		}
		if !l.connected {
			if fallback < 0 {
				fallback = i
			}
			continue
		}
		if top > l.head+uint64(headLag) {
			continue // behind: it takes no call
		}
		if best < 0 || legs[best].late && !l.late || legs[best].late == l.late && l.head > legs[best].head {
			best = i
		}
	}
	if best >= 0 {
		return best
	}
	return fallback
}
