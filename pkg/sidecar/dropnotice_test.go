package sidecar_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/pkg/protocol"
)

// Under Overflow drop-newest a client that asked for gap notices and
// fell behind is told of what it lost, as of a hole upstream: every jump
// in the frames it reads comes right after a gap notice with cause
// "dropped", and it reads frames after the jumps (it stayed connected).
// Before, it read the jumps unmarked: less warning than a program
// connected to the venue, whose own buffer's drops it counts itself.
func TestDroppedFramesAreNoticed(t *testing.T) {
	dc := dialects[0]
	r, slow, st := fallBehind(t, dc, "?notify=gaps")
	require.NotZero(t, st.Dropped, "nothing was dropped")

	// Messages after the hole, once the slow client reads again.
	const after = 10
	go func() {
		for i := range after {
			time.Sleep(50 * time.Millisecond)
			r.up.Publish(dc.topic, bigPayload(slowFrames+i))
		}
	}()
	last, notices, jumps, noticed := -1, 0, 0, false
	for last < slowFrames+after-1 {
		_ = slow.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, data, err := slow.ReadMessage()
		require.NoError(t, err)
		if n, ok := protocol.ParseGapNotice(data); ok {
			assert.Equal(t, protocol.GapNotice{Channel: dc.topic, Cause: protocol.GapDropped}, n)
			notices++
			noticed = true
			continue
		}
		i := strings.Index(string(data), `"seq":`)
		require.GreaterOrEqual(t, i, 0, "%.80s", data)
		var seq int
		_, err = fmt.Sscanf(string(data[i+6:]), "%d", &seq)
		require.NoError(t, err)
		if seq != last+1 {
			require.True(t, noticed, "frame %d after %d with no notice before it", seq, last)
			jumps++
		}
		last, noticed = seq, false
	}
	assert.NotZero(t, jumps, "frames were lost and later ones read")
	assert.Equal(t, jumps, notices, "one notice a hole")
}
