package sidecar

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/pkg/protocol"
)

// A batch with send slots is written with each slot filled in the
// writer's scratch, the shared slot untouched; a write cut inside a
// stamped frame leaves the frame's rest with its filled slot, so the
// close frame that follows is readable.
func TestSendSlotsFilledAndCut(t *testing.T) {
	head := []byte(`{"a":1,"wsfan":{"venue_ns":0,"recv_ns":5,"send_ns":`)
	plain := []byte(`{"b":2}`)
	batch := [][]byte{plain, head, wsSendSlot, head, wsSendSlot}
	vec := append([][]byte(nil), batch...)
	tails := fillSendSlots(vec, nil)
	require.Len(t, tails, 2*protocol.StampsTailLen)
	for _, i := range []int{2, 4} {
		frame := append(append([]byte(nil), head...), vec[i]...)
		_, st, ok := protocol.CutStamps(frame)
		require.True(t, ok, "%s", frame)
		assert.Positive(t, st.Send)
		assert.False(t, isSendSlot(vec[i]), "filled in the scratch")
	}
	assert.Equal(t, string(protocol.AppendStampsTail(nil, 0)), string(wsSendSlot), "the shared slot is never written")

	n := int64(len(plain) + len(head) + protocol.StampsTailLen) // the first stamped frame written
	assert.Nil(t, unwrittenTail(batch, tails, n), "between frames")
	assert.Equal(t, string(head[3:])+string(vec[4]), string(unwrittenTail(batch, tails, n+3)), "cut in the second frame's head")
	assert.Equal(t, string(vec[4]), string(unwrittenTail(batch, tails, n+int64(len(head)))), "its head written, not its slot")
	assert.Equal(t, string(vec[4][7:]), string(unwrittenTail(batch, tails, n+int64(len(head))+7)), "cut in its slot")
	assert.Equal(t, string(plain[2:]), string(unwrittenTail(batch, tails, 2)), "cut in a plain frame")
}

// A session counts a stamped frame and its send slot as one frame.
func TestSendSlotCountsAsNoFrame(t *testing.T) {
	s := &session{enc: wsStamped}
	assert.Equal(t, 2, s.countFrames([][]byte{[]byte("x"), []byte("head"), wsSendSlot}))
	s.enc = wsFrames
	assert.Equal(t, 1, s.countFrames([][]byte{[]byte("x")}))
}
