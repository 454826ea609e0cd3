package client

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// A call goes to a leg whose pongs come on time rather than to one whose
// pong is late (the link may be dying: it is declared dead only once the
// pong timeout passes), and to the late one when no other can take it.
func TestStandbyCallsAvoidALegWhosePongsAreLate(t *testing.T) {
	p := bookDialect{}
	sb := &Standby{legs: []*Client{newBenchClient(p), newBenchClient(p)}, headLag: DefaultHeadLag}
	now := time.Now()
	for _, c := range sb.legs {
		c.state.Store(int32(StateConnected))
		c.ponged.Store(now.UnixNano())
	}
	late := now.Add(-(sb.legs[0].cfg.pingInterval + sb.legs[0].cfg.pongTimeout*3/4))
	sb.legs[0].ponged.Store(late.UnixNano())
	assert.Equal(t, 1, sb.caller(make([]bool, 2)), "leg 0's pong is late")
	assert.Equal(t, 0, sb.caller([]bool{false, true}), "the late leg when no other is left")
	sb.legs[0].ponged.Store(now.UnixNano())
	assert.Equal(t, 0, sb.caller(make([]bool, 2)), "on time again: the first leg")
}
