package client_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// TestStalledConsumerDoesNotDelayOthers: one subscription is never read;
// under every non-blocking policy the other still gets every message in
// order, and the stalled one accounts for every frame it was sent.
func TestStalledConsumerDoesNotDelayOthers(t *testing.T) {
	const sent = 300
	// 8 fits the channel; 200 is held mostly beside it (see C).
	for _, buffer := range []int{8, 200} {
		for _, policy := range []client.OverflowPolicy{client.DropOldest, client.DropNewest, client.CloseSubscription} {
			t.Run(fmt.Sprintf("buffer=%d/%v", buffer, policy), func(t *testing.T) {
				stalledConsumer(t, sent, buffer, policy)
			})
		}
	}
}

func stalledConsumer(t *testing.T, sent, buffer int, policy client.OverflowPolicy) {
	srv := newServer(t, thalex.Name)
	c := dial(t, srv, dialects[0].proto(), client.Buffer(buffer), client.Overflow(policy), client.Grace(0))
	ctx := testutil.Context(t)
	stalled, err := c.Subscribe(ctx, []string{"ticker.STALLED.raw"})
	require.NoError(t, err)
	live, err := c.Subscribe(ctx, []string{"ticker.LIVE.raw"})
	require.NoError(t, err)

	// Interleave the two topics, reading the live one in lockstep:
	// each of its messages must arrive while the stalled
	// subscription's buffer is full.
	for i := 1; i <= sent; i++ {
		srv.Publish("ticker.STALLED.raw", fmt.Appendf(nil, `{"n":%d}`, i))
		srv.Publish("ticker.LIVE.raw", fmt.Appendf(nil, `{"n":%d}`, i))
		m := receive(t, live)
		require.Equal(t, uint64(i), m.Seq, "live subscription lost or reordered a message")
	}
	assert.Zero(t, live.Dropped())

	// The stalled subscription: what it holds plus what it dropped
	// is what it was sent.
	switch policy {
	case client.CloseSubscription:
		assert.ErrorIs(t, <-stalled.Err(), client.ErrSlowConsumer)
		var seqs []uint64
		for m := range stalled.C() {
			seqs = append(seqs, m.Seq)
		}
		assert.Len(t, seqs, cap(stalled.C()), "what the channel holds stays readable")
		for i, s := range seqs {
			assert.Equal(t, uint64(i+1), s)
		}
		require.NoError(t, srv.WaitSubscribers(ctx, "ticker.STALLED.raw", 0), "ended topic is unsubscribed upstream")
	default:
		require.Eventually(t, func() bool { return stalled.Dropped() == uint64(sent-buffer) }, 5*time.Second, time.Millisecond,
			"dropped %d", stalled.Dropped())
		var held []uint64
		for len(held) < buffer {
			held = append(held, receive(t, stalled).Seq)
		}
		first := uint64(1)
		if policy == client.DropOldest {
			first = uint64(sent - buffer + 1) // the freshest survive
		}
		for i, s := range held {
			assert.Equal(t, first+uint64(i), s)
		}
		assert.Empty(t, stalled.C(), "nothing more than the buffer was kept")
	}
}

// TestBlockPolicyDeliversEverything: Block never drops; it waits for the
// consumer, and Unsubscribe releases a reader blocked on it.
func TestBlockPolicyDeliversEverything(t *testing.T) {
	srv := newServer(t, thalex.Name)
	c := dial(t, srv, dialects[0].proto(), client.Buffer(2), client.Overflow(client.Block))
	ctx := testutil.Context(t)
	sub, err := c.Subscribe(ctx, []string{"ticker.A.raw"})
	require.NoError(t, err)
	for i := 1; i <= 50; i++ {
		srv.Publish("ticker.A.raw", fmt.Appendf(nil, `{"n":%d}`, i))
	}
	for i := 1; i <= 50; i++ {
		require.Equal(t, uint64(i), receive(t, sub).Seq)
	}
	assert.Zero(t, sub.Dropped())

	// Fill the buffer and block the reader, then unsubscribe.
	for i := 0; i < 5; i++ {
		srv.Publish("ticker.A.raw", []byte(`{}`))
	}
	require.Eventually(t, func() bool { return len(sub.C()) == 2 }, 5*time.Second, time.Millisecond)
	require.NoError(t, sub.Unsubscribe(ctx))
	// The reader is free again: calls are answered.
	other, err := c.Subscribe(ctx, []string{"ticker.B.raw"})
	require.NoError(t, err)
	require.NoError(t, other.Unsubscribe(ctx))
}

// TestPerSubscriptionPolicies: on one connection a Block subscription
// loses nothing while a DropOldest one keeps the freshest, each by its
// own options; drops are counted exactly and each slow-consumer episode
// raises exactly one SlowConsumer event.
func TestPerSubscriptionPolicies(t *testing.T) {
	const sent, buffer = 100, 4
	srv := newServer(t, thalex.Name)
	c := dial(t, srv, dialects[0].proto(), client.WithEventBuffer(1024))
	ctx := testutil.Context(t)
	book, err := c.Subscribe(ctx, []string{"book.A.none.10.100ms"}, client.Buffer(buffer), client.Overflow(client.Block))
	require.NoError(t, err)
	ticker, err := c.Subscribe(ctx, []string{"ticker.A.raw"}, client.Buffer(buffer), client.Overflow(client.DropOldest), client.Grace(0))
	require.NoError(t, err)

	// Episode 1: the ticker is not read.
	for i := 1; i <= sent; i++ {
		srv.Publish("ticker.A.raw", fmt.Appendf(nil, `{"n":%d}`, i))
	}
	require.Eventually(t, func() bool { return ticker.Dropped() == sent-buffer }, 5*time.Second, time.Millisecond)
	assert.Len(t, ticker.C(), buffer, "buffered + dropped == sent")
	for i := sent - buffer + 1; i <= sent; i++ {
		assert.Equal(t, uint64(i), receive(t, ticker).Seq, "the freshest survive")
	}

	// The book loses nothing while its consumer lags behind.
	go func() {
		for i := 1; i <= sent; i++ {
			srv.Publish("book.A.none.10.100ms", fmt.Appendf(nil, `{"n":%d}`, i))
		}
	}()
	for i := 1; i <= sent; i++ {
		require.Equal(t, uint64(i), receive(t, book).Seq)
	}
	assert.Zero(t, book.Dropped())

	// A message delivered with room ends the episode; the next overflow
	// starts episode 2.
	srv.Publish("ticker.A.raw", []byte(`{"n":0}`))
	receive(t, ticker)
	for range buffer + 3 {
		srv.Publish("ticker.A.raw", []byte(`{"n":0}`))
	}
	require.Eventually(t, func() bool { return ticker.Dropped() == sent-buffer+3 }, 5*time.Second, time.Millisecond)

	var slow []client.Event
	for len(c.Events()) > 0 {
		if ev := <-c.Events(); ev.Kind == client.SlowConsumer {
			slow = append(slow, ev)
		}
	}
	require.Len(t, slow, 2, "one event per episode")
	assert.Equal(t, "ticker.A.raw", slow[0].Topic)
	assert.Equal(t, uint64(1), slow[0].Dropped)
	assert.Equal(t, uint64(sent-buffer+1), slow[1].Dropped)
}

// TestSlowConsumerEventsDoNotFlap: a consumer slower than the feed takes
// one message for every three sent. Each message it takes makes room for
// one more, but it never catches up: one episode, one SlowConsumer event,
// however many drops. Once it drains its buffer the episode is over, and
// the next overflow raises the next event.
func TestSlowConsumerEventsDoNotFlap(t *testing.T) {
	srv := newServer(t, thalex.Name)
	c := dial(t, srv, dialects[0].proto(), client.WithEventBuffer(1024))
	ctx := testutil.Context(t)
	sub, err := c.Subscribe(ctx, []string{"ticker.A.raw"}, client.Buffer(4), client.Grace(0))
	require.NoError(t, err)
	// Receiving from mark proves every frame published before was routed.
	mark, err := c.Subscribe(ctx, []string{"ticker.MARK.raw"})
	require.NoError(t, err)
	routed := func() {
		srv.Publish("ticker.MARK.raw", []byte(`{}`))
		receive(t, mark)
	}
	for range 20 {
		for range 3 {
			srv.Publish("ticker.A.raw", []byte(`{}`))
		}
		routed()
		receive(t, sub)
	}
	slow := slowConsumerEvents(c)
	require.Len(t, slow, 1, "%d drops", sub.Dropped())
	assert.Same(t, sub, slow[0].Subscription)
	assert.Equal(t, uint64(1), slow[0].Dropped)
	dropped := sub.Dropped()
	assert.Equal(t, uint64(60-20-len(sub.C())), dropped, "received + buffered + dropped == sent")

	for len(sub.C()) > 0 {
		receive(t, sub)
	}
	for range 10 {
		srv.Publish("ticker.A.raw", []byte(`{}`))
	}
	routed()
	slow = slowConsumerEvents(c)
	require.Len(t, slow, 1, "caught up, then a new episode")
	assert.Equal(t, dropped+1, slow[0].Dropped)
}

// slowConsumerEvents returns the SlowConsumer events queued on c.
func slowConsumerEvents(c *client.Client) []client.Event {
	var out []client.Event
	for len(c.Events()) > 0 {
		if ev := <-c.Events(); ev.Kind == client.SlowConsumer {
			out = append(out, ev)
		}
	}
	return out
}

// TestPendingBytesLimit: a subscription holds no more bytes of data than
// its limit, beside its message count; a message larger than the limit
// still goes through when nothing is pending.
func TestPendingBytesLimit(t *testing.T) {
	const limit, size, sent = 1000, 100, 20
	srv := newServer(t, thalex.Name)
	c := dial(t, srv, dialects[0].proto())
	ctx := testutil.Context(t)
	sub, err := c.Subscribe(ctx, []string{"ticker.A.raw"},
		client.Buffer(100), client.PendingBytes(limit), client.Overflow(client.DropNewest), client.Grace(0))
	require.NoError(t, err)

	payload := fmt.Appendf(nil, `{"pad":"%s"}`, strings.Repeat("x", size-10))
	require.Len(t, payload, size)
	for range sent {
		srv.Publish("ticker.A.raw", payload)
	}
	require.Eventually(t, func() bool { return sub.Dropped() == sent-limit/size }, 5*time.Second, time.Millisecond)
	held := 0
	for range limit / size {
		held += len(receive(t, sub).Data)
	}
	assert.Equal(t, limit, held)
	assert.Empty(t, sub.C())

	big := fmt.Appendf(nil, `{"pad":"%s"}`, strings.Repeat("x", 2*limit))
	srv.Publish("ticker.A.raw", big)
	assert.Equal(t, big, receive(t, sub).Data)
	assert.Equal(t, uint64(sent-limit/size), sub.Dropped())
}

// TestBufferBeyondChannel: a subscription's channel has at most 64 slots;
// the rest of its buffer (1,024 by default) is held beside it while the
// consumer is behind and handed over in order, losing nothing, under every
// policy that waits or keeps the oldest.
func TestBufferBeyondChannel(t *testing.T) {
	const sent = 1000
	for _, policy := range []client.OverflowPolicy{client.DropNewest, client.Block} {
		t.Run(policy.String(), func(t *testing.T) {
			srv := newServer(t, thalex.Name)
			c := dial(t, srv, dialects[0].proto(), client.Overflow(policy))
			ctx := testutil.Context(t)
			sub, err := c.Subscribe(ctx, []string{"ticker.A.raw"})
			require.NoError(t, err)
			assert.Equal(t, 64, cap(sub.C()))
			for i := 1; i <= sent; i++ {
				srv.Publish("ticker.A.raw", fmt.Appendf(nil, `{"n":%d}`, i))
			}
			for i := 1; i <= sent; i++ {
				require.Equal(t, uint64(i), receive(t, sub).Seq)
			}
			assert.Zero(t, sub.Dropped())

			// Caught up: the next message goes straight into the channel.
			srv.Publish("ticker.A.raw", []byte(`{"n":0}`))
			require.Equal(t, uint64(sent+1), receive(t, sub).Seq)
		})
	}
}

// TestBlockBeyondChannelWithSlowConsumer: Block with a buffer beyond the
// channel and a consumer that pauses now and then delivers every message
// in order; Unsubscribe meanwhile ends the mover and frees the reader.
func TestBlockBeyondChannelWithSlowConsumer(t *testing.T) {
	const sent = 3000
	srv := newServer(t, thalex.Name)
	c := dial(t, srv, dialects[0].proto(), client.Buffer(200), client.Overflow(client.Block))
	ctx := testutil.Context(t)
	sub, err := c.Subscribe(ctx, []string{"ticker.A.raw"})
	require.NoError(t, err)
	go func() {
		for i := 1; i <= sent; i++ {
			srv.Publish("ticker.A.raw", fmt.Appendf(nil, `{"n":%d}`, i))
		}
	}()
	for i := 1; i <= sent; i++ {
		require.Equal(t, uint64(i), receive(t, sub).Seq)
		if i%500 == 0 {
			time.Sleep(20 * time.Millisecond)
		}
	}
	assert.Zero(t, sub.Dropped())

	for range 500 { // more than the buffer: the reader blocks, the mover waits
		srv.Publish("ticker.A.raw", []byte(`{}`))
	}
	require.Eventually(t, func() bool { return len(sub.C()) == 64 }, 5*time.Second, time.Millisecond)
	require.NoError(t, sub.Unsubscribe(ctx))
	n := 0
	for range sub.C() {
		n++
	}
	assert.Equal(t, 64, n, "what the channel held stays readable")
	other, err := c.Subscribe(ctx, []string{"ticker.B.raw"})
	require.NoError(t, err, "the reader is free again")
	require.NoError(t, other.Unsubscribe(ctx))
}

// TestOverflowPolicyNames: every policy reads back from its own name, in
// any case; an unknown name is refused naming the known ones.
func TestOverflowPolicyNames(t *testing.T) {
	for _, p := range []client.OverflowPolicy{client.DefaultOverflow, client.DropOldest, client.DropNewest, client.Block, client.CloseSubscription} {
		text, err := p.MarshalText()
		require.NoError(t, err)
		var back client.OverflowPolicy
		require.NoError(t, back.UnmarshalText([]byte(strings.ToUpper(string(text)))))
		assert.Equal(t, p, back, "%s", text)
	}
	var p client.OverflowPolicy
	err := p.UnmarshalText([]byte("drop"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "drop-newest")
	_, err = client.OverflowPolicy(99).MarshalText()
	assert.Error(t, err)
}

// TestGraceLendsRoomOffTheReader: a full buffer under a dropping policy
// lends room for the subscription's grace, up to four times its Buffer,
// without holding up the reader (another topic's messages arrive
// meanwhile, one for one); once the grace is spent with the buffer still
// full, the policy applies; a consumer that caught up earns it again.
func TestGraceLendsRoomOffTheReader(t *testing.T) {
	const buffer = 4
	srv := newServer(t, thalex.Name)
	c := dial(t, srv, dialects[0].proto())
	ctx := testutil.Context(t)
	lent, err := c.Subscribe(ctx, []string{"ticker.LENT.raw"}, client.Buffer(buffer), client.Overflow(client.DropNewest), client.Grace(time.Hour))
	require.NoError(t, err)
	short, err := c.Subscribe(ctx, []string{"ticker.SHORT.raw"}, client.Buffer(buffer), client.Overflow(client.DropNewest), client.Grace(50*time.Millisecond))
	require.NoError(t, err)
	live, err := c.Subscribe(ctx, []string{"ticker.LIVE.raw"})
	require.NoError(t, err)
	// Receiving from live proves every frame published before was routed.
	routed := func() {
		srv.Publish("ticker.LIVE.raw", []byte(`{}`))
		receive(t, live)
	}

	for range 4 * buffer {
		srv.Publish("ticker.LENT.raw", []byte(`{}`))
		routed()
	}
	assert.Zero(t, lent.Dropped(), "lent room while the grace lasts")
	srv.Publish("ticker.LENT.raw", []byte(`{}`))
	routed()
	assert.Equal(t, uint64(1), lent.Dropped(), "four times Buffer at most")
	for i := 1; i <= 4*buffer; i++ {
		require.Equal(t, uint64(i), receive(t, lent).Seq)
	}

	for range buffer + 1 {
		srv.Publish("ticker.SHORT.raw", []byte(`{}`))
	}
	routed()
	assert.Zero(t, short.Dropped(), "the first message beyond the buffer is lent room")
	time.Sleep(60 * time.Millisecond) // the grace is spent; nothing is read
	srv.Publish("ticker.SHORT.raw", []byte(`{}`))
	routed()
	assert.Equal(t, uint64(1), short.Dropped(), "after the grace the policy applies")
	for i := 1; i <= buffer+1; i++ {
		require.Equal(t, uint64(i), receive(t, short).Seq)
	}
	// Caught up: the next overflow is lent room again.
	for range buffer + 1 {
		srv.Publish("ticker.SHORT.raw", []byte(`{}`))
	}
	routed()
	assert.Equal(t, uint64(1), short.Dropped())
}
