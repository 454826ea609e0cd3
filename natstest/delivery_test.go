package natstest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/natsbridge"
)

// A group's subscription is delivered by pkg/client's own engine, so its
// options mean what they mean on a client: a byte limit bounds what
// waits for a consumer that does not read (here 1 byte: the second
// message is over it), and CloseSubscription then ends the subscription
// with ErrSlowConsumer, counting the drop.
func TestGroupSubscriptionDeliversLikeAClient(t *testing.T) {
	ns := startNATS(t)
	ex := exchange(t)
	topics := startFeed(ex, 10*time.Millisecond)
	m := join(t, connect(t, ns.url()), "g1", "m0", ex,
		natsbridge.WithDelivery(client.Buffer(1<<20), client.PendingBytes(1), client.Overflow(client.CloseSubscription)))
	sub, err := m.Subscribe(context.Background(), topics...)
	require.NoError(t, err)

	select {
	case err := <-sub.Err():
		require.ErrorIs(t, err, client.ErrSlowConsumer)
	case <-time.After(5 * time.Second): // a million messages would take 100 s to fill the count
		t.Fatal("the unread subscription was never ended")
	}
	assert.Positive(t, sub.Dropped())
	// The member counts the drop once the delivery that ended it returns.
	require.Eventually(t, func() bool { return m.Stats().Dropped > 0 }, 5*time.Second, 5*time.Millisecond)
}
