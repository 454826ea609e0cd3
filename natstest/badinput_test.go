package natstest

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/natsbridge"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// A member that cannot lead joining a group nobody created fails at
// once; names NATS cannot carry are refused before anything is sent.
func TestJoinRejectsUnknownGroupAndBadNames(t *testing.T) {
	ns := startNATS(t)
	nc := connect(t, ns.url())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	_, err := natsbridge.Join(ctx, nc, "nobody")
	require.ErrorIs(t, err, natsbridge.ErrUnknownGroup)
	assert.Contains(t, err.Error(), "wsfan_nobody_lease")

	for _, group := range []string{"", "a.b", "a*", "a b", strings.Repeat("g", 65)} {
		_, err := natsbridge.Join(ctx, nc, group)
		assert.ErrorContains(t, err, "invalid group", "%q", group)
	}
	_, err = natsbridge.Join(ctx, nc, "g", natsbridge.WithMemberID("bad id"))
	assert.ErrorContains(t, err, "invalid member id")
	_, err = natsbridge.Join(ctx, nc, "g", natsbridge.WithLeaseTTL(time.Millisecond))
	assert.ErrorContains(t, err, "lease TTL")
}

// Started while NATS is down, Join retries with backoff and returns once
// NATS is up; the member then works.
func TestJoinWaitsForNATS(t *testing.T) {
	ns := startNATS(t)
	ns.stop()
	ex := exchange(t)
	nc := connect(t, ns.url()) // RetryOnFailedConnect: not connected yet

	joined := make(chan *natsbridge.Member, 1)
	go func() { joined <- join(t, nc, "g8", "a", ex) }()
	select {
	case <-joined:
		t.Fatal("joined with NATS down")
	case <-time.After(300 * time.Millisecond):
	}
	ns.start()
	var m *natsbridge.Member
	select {
	case m = <-joined:
	case <-time.After(15 * time.Second):
		t.Fatal("Join did not return after NATS came up")
	}
	leaderOf(t, m)
	sub, err := m.Subscribe(context.Background(), "ticker.X.raw")
	require.NoError(t, err)
	wctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, ex.WaitSubscribers(wctx, "ticker.X.raw", 1))
	ex.Publish("ticker.X.raw", []byte(`{}`))
	_, err = next(sub, 10*time.Second)
	require.NoError(t, err)
}

// Topics whose names NATS cannot carry as they are (wildcards,
// separators in odd places, ':', '$', non-ASCII), and one so long it is
// hashed, travel from the exchange to a consumer with their names and
// payloads intact, and a wildcard subscriber sees the escaped subjects.
// (Spaces and '>' are covered by the encoding's unit and fuzz tests:
// Thalex rejects spaces, and pkg/protocol reads an accepted channel that
// the server JSON-escapes, as exchangetest does '>', as refused.)
func TestEscapedAndHashedTopicsRoundTrip(t *testing.T) {
	ns := startNATS(t)
	ex := exchange(t)
	ctx := context.Background()
	topics := []string{
		"ticker.*.raw",
		"*",
		"$SYS.x",
		"..leading.dots",
		"trailing.dot.",
		"L2Book:BTCUSD",
		"ünïcødé.τοπικ",
		"long." + strings.Repeat("x", 300),
	}
	a := join(t, connect(t, ns.url()), "g9", "a", ex)
	leaderOf(t, a)
	b := join(t, connect(t, ns.url()), "g9", "b", nil)
	sub, err := b.Subscribe(ctx, topics...)
	require.NoError(t, err)
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for _, topic := range topics {
		require.NoError(t, ex.WaitSubscribers(wctx, topic, 1), topic)
	}

	raw := connect(t, ns.url())
	tap, err := raw.SubscribeSync("wsfan.g9.t.>")
	require.NoError(t, err)
	require.NoError(t, raw.Flush())

	got := make(map[string]string)
	for i, topic := range topics {
		ex.Publish(topic, []byte(`{"i":`+string(rune('0'+i))+`}`))
		m, err := next(sub, 10*time.Second)
		require.NoError(t, err, topic)
		got[m.Topic] = string(m.Data)

		msg, err := tap.NextMsg(10 * time.Second)
		require.NoError(t, err)
		enc, hashed := natsbridge.EncodeTopic(topic)
		assert.Equal(t, "wsfan.g9.t."+enc, msg.Subject)
		if hashed {
			assert.Equal(t, topic, msg.Header.Get(natsbridge.HeaderTopic))
		} else {
			back, err := natsbridge.DecodeTopic(strings.TrimPrefix(msg.Subject, "wsfan.g9.t."))
			require.NoError(t, err)
			assert.Equal(t, topic, back)
		}
	}
	for i, topic := range topics {
		assert.Equal(t, `a|{"i":`+string(rune('0'+i))+`}`, got[topic], topic)
	}
}

// A topic the upstream refuses, or one its dialect cannot express, ends
// the subscriptions of it with a *client.RefusedError naming it, also
// for a member that asks later.
func TestRefusedTopicEndsSubscriptions(t *testing.T) {
	ns := startNATS(t)
	ex := exchange(t)
	ex.SetRefused("ticker.NOPE.raw")
	ctx := context.Background()
	a := join(t, connect(t, ns.url()), "g10", "a", ex)
	leaderOf(t, a)
	b := join(t, connect(t, ns.url()), "g10", "b", nil)
	for _, topic := range []string{"ticker.NOPE.raw", "odd topic"} {
		for _, m := range []*natsbridge.Member{a, b} {
			sub, err := m.Subscribe(ctx, topic)
			require.NoError(t, err)
			select {
			case err := <-sub.Err():
				var re *client.RefusedError
				require.ErrorAs(t, err, &re)
				assert.Equal(t, []string{topic}, re.Topics)
				assert.ErrorIs(t, err, client.ErrRefused)
			case <-time.After(10 * time.Second):
				t.Fatalf("the refusal of %q did not arrive", topic)
			}
			_, open := <-sub.C()
			assert.False(t, open)
		}
	}
}

// Calls from any member reach the upstream through the leader, with the
// upstream's errors and the leader's call policy.
func TestCallsGoThroughTheLeader(t *testing.T) {
	ns := startNATS(t)
	ex := exchange(t)
	ex.Handle("public/echo", func(params json.RawMessage) (any, *protocol.Error) { return params, nil })
	ex.Handle("public/fail", func(json.RawMessage) (any, *protocol.Error) {
		return nil, &protocol.Error{Code: 7, Message: "no such thing"}
	})
	policy := natsbridge.WithCallPolicy(func(method string) error {
		if method == "public/login" {
			return errors.New("log in on the leader's upstream instead")
		}
		return nil
	})
	ctx := context.Background()
	a := join(t, connect(t, ns.url()), "g11", "a", ex, policy)
	leaderOf(t, a)
	b := join(t, connect(t, ns.url()), "g11", "b", nil)

	res, err := b.CallRaw(ctx, "public/echo", []byte(`{"x":1}`))
	require.NoError(t, err)
	assert.JSONEq(t, `{"x":1}`, string(res))

	_, err = b.CallRaw(ctx, "public/fail", nil)
	var re *client.RPCError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, 7, re.Code)

	_, err = b.CallRaw(ctx, "public/login", nil)
	assert.ErrorIs(t, err, natsbridge.ErrMethodNotAllowed)
	assert.ErrorContains(t, err, "log in on the leader's upstream instead")

	require.NoError(t, a.Close()) // no candidate left
	cctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	_, err = b.CallRaw(cctx, "public/echo", nil)
	assert.ErrorIs(t, err, natsbridge.ErrNoLeader)
}
