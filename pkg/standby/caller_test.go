package standby

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/wsfan/wsfan/pkg/client"
)

// A call goes to a leg whose pongs come on time rather than to one whose
// pong is late (the link may be dying: it is declared dead only once the
// pong timeout passes), and to the late one when no other can take it.
func TestStandbyCallsAvoidALegWhosePongsAreLate(t *testing.T) {
	legs := []legNow{{connected: true, late: true}, {connected: true}} // leg 0's pong is late (client.Leg.Late)
	assert.Equal(t, 1, pickCaller(legs, make([]bool, 2), client.DefaultHeadLag), "leg 0's pong is late")
	assert.Equal(t, 0, pickCaller(legs, []bool{false, true}, client.DefaultHeadLag), "the late leg when no other is left")
	legs[0].late = false
	assert.Equal(t, 0, pickCaller(legs, make([]bool, 2), client.DefaultHeadLag), "on time again: the first leg")
}
