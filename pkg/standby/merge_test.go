package standby

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/ethereum"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// The window delivers the first arrival of each sending of an identity:
// a second leg's copy is not delivered, an identity one leg sends twice
// is delivered twice, and an identity forgotten (the oldest, once the
// window is full) is delivered again.
func TestIdentityWindowCountsEachLegsSendings(t *testing.T) {
	w := newIdentityWindow(3)
	first := func(id uint64, leg int) bool { // as merge.offer decides
		s := w.add(id, leg)
		if s.legs[leg] <= s.delivered {
			return false
		}
		s.delivered = s.legs[leg]
		return true
	}
	assert.True(t, first(1, 0), "first arrival")
	assert.False(t, first(1, 1), "the other leg's copy")
	assert.True(t, first(1, 1), "the other leg sent it a second time first")
	assert.False(t, first(1, 0), "the first leg's second copy")
	assert.True(t, first(2, 1))
	assert.True(t, first(3, 0))
	assert.True(t, first(4, 0), "the window is full: 1 is forgotten")
	assert.False(t, first(2, 0), "2 is remembered")
	assert.True(t, first(1, 1), "1 was forgotten, so its late copy is delivered again")
	assert.Len(t, w.index, 3)
}

// An identity still in use moves to a new slot with its counts before
// the ring would forget it: a leg's late copy of a payload sent again
// and again is still told from a new sending.
func TestIdentityWindowKeepsABusyIdentity(t *testing.T) {
	w := newIdentityWindow(4)
	const busy = 1
	for other := uint64(10); other < 30; other++ {
		s := w.add(busy, 0) // leg 0 sends the busy payload again
		s.delivered = s.legs[0]
		w.add(other, 0)
	}
	s := w.slot(busy)
	if assert.NotNil(t, s, "the busy identity is remembered") {
		assert.Equal(t, uint32(20), s.legs[0])
		assert.Equal(t, uint32(20), s.delivered, "its counts moved with it")
	}
	assert.Nil(t, w.slot(10), "an identity not in use is forgotten")
	assert.LessOrEqual(t, len(w.index), 4)
}

// A leg far behind the other sends its old heads one after another:
// each is dropped, the merged stream being past it, before it takes a
// slot of the window, so none pushes out the identity of the last head
// delivered, and the leg's copy of that head (at the height last
// delivered, which the identity alone judges) is not delivered again.
// It was, once the lagging leg had sent a window's worth of old heads:
// 1 head in 100,000 twice in BenchmarkStandbyBlast, feed=blast.
func TestMergeLegFarBehindDeliversNoHeadTwice(t *testing.T) {
	p := ethereum.Protocol()
	sb := &Standby{legs: make([]*client.Client, 2), health: make([]legHealth, 2), seed: maphash.MakeSeed(),
		merges: make(map[*merge]struct{}), proto: p}
	sb.ctx, sb.cancel = context.WithCancel(context.Background())
	t.Cleanup(sb.cancel)
	t0 := time.Now()
	for i := range sb.legs {
		sb.health[i].upSince.Store(t0.UnixNano())
	}
	topic, err := p.NewTopic("newHeads")
	require.NoError(t, err)
	m := sb.mergeInto([]*protocol.Topic{topic})
	const ahead = 2 * Window // leg 0's lead, in heads
	m.out = client.NewInlet([]string{"newHeads"}, client.Buffer(ahead+8))
	t.Cleanup(func() { _ = m.end(context.Background(), nil) })
	offer := func(leg, n int) {
		data := fmt.Appendf(nil, `{"number":"0x%x","hash":"0x%064x","parentHash":"0x%064x"}`, n, n+1, n)
		m.offer(leg, client.Message{Topic: "newHeads", Data: data, RecvTime: t0})
	}

	for n := 1; n <= ahead; n++ {
		offer(0, n)
	}
	for n := 1; n <= ahead; n++ { // leg 1 catches up
		offer(1, n)
	}
	offer(1, ahead+1)
	offer(0, ahead+1)
	offer(0, ahead+2) // the last: a head twice comes before it
	offer(1, ahead+2)

	sub := m.out.Subscription()
	for want := 1; want <= ahead+2; want++ {
		var msg client.Message
		select {
		case msg = <-sub.C():
		case <-time.After(10 * time.Second):
			t.Fatalf("head %d never delivered", want)
		}
		var h struct{ Number string }
		require.NoError(t, json.Unmarshal(msg.Data, &h))
		require.Equal(t, fmt.Sprintf("0x%x", want), h.Number, "every head once, in order")
	}
	assert.Zero(t, sub.Dropped())
}
