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

// A trailing leg's dropped copies do not wait for the merge's lock while
// another leg's offer holds it: they are counted once it is free, by the
// next drop that finds it so (or the leg's next offer), as sendings of
// their identities. The reader waited for the lock every copyFold
// copies; this test, holding the lock on the reader's own goroutine,
// hung there.
func TestDroppedCopiesWaitNotForTheMergesLock(t *testing.T) {
	_, m, _ := headCopies(t)
	ids := make([]uint64, copyFold+2)
	m.mu.Lock()
	for i := range ids {
		ids[i] = uint64(i + 1)
		m.seen.Add(ids[i], 0) // delivered by leg 0, first
	}
	for _, id := range ids[:len(ids)-1] {
		m.dropped(1, id)
	}
	require.Len(t, m.drops[1].ids, len(ids)-1, "kept while the lock is held")
	m.mu.Unlock()
	m.dropped(1, ids[len(ids)-1])
	assert.Empty(t, m.drops[1].ids, "counted once the lock was free")
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, id := range ids {
		require.NotNil(t, m.seen.Slot(id))
		assert.Equal(t, uint32(1), m.seen.Slot(id).Sent[1], "identity %d: leg 1 sent it once", id)
	}
}
