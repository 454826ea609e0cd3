package client_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/deribit"
	"github.com/wsfan/wsfan/pkg/ethereal"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// gapCase is a sequenced book topic of a dialect and how to write its
// updates by hand.
type gapCase struct {
	name   string
	server exchangetest.Dialect
	proto  func() protocol.Protocol
	book   string
	other  string // a topic of the same dialect that is not sequenced
	update func(id, prev uint64) []byte
	unsub  string // the method (Ethereal: event) of an unsubscribe frame
}

var gapCases = []gapCase{
	{
		name: "deribit", server: deribit.Name,
		proto: func() protocol.Protocol { return deribit.Protocol(deribit.WithHeartbeat(0)) },
		book:  "book.BTC-PERPETUAL.100ms", other: "ticker.BTC-PERPETUAL.100ms",
		update: func(id, prev uint64) []byte {
			if prev == 0 { // a snapshot names no previous change
				return fmt.Appendf(nil, `{"type":"snapshot","change_id":%d,"bids":[],"asks":[]}`, id)
			}
			return fmt.Appendf(nil, `{"type":"change","change_id":%d,"prev_change_id":%d,"bids":[],"asks":[]}`, id, prev)
		},
		unsub: "public/unsubscribe",
	},
	{
		name: "ethereal", server: ethereal.Name, proto: ethereal.Protocol,
		book: "L2Book:BTCUSD", other: "Ticker:BTCUSD",
		update: func(t, pt uint64) []byte {
			if pt == 0 {
				return fmt.Appendf(nil, `{"s":"BTCUSD","t":%d,"a":[],"b":[]}`, t)
			}
			return fmt.Appendf(nil, `{"s":"BTCUSD","t":%d,"pt":%d,"a":[],"b":[]}`, t, pt)
		},
		unsub: "unsubscribe",
	},
}

// A book update whose previous change id is not the last one seen raises
// a Gap event and flags the message; updates that follow on are not
// flagged, and topics that carry no change ids are never checked.
func TestBookGapDetected(t *testing.T) {
	for _, tc := range gapCases {
		t.Run(tc.name, func(t *testing.T) {
			srv := newServer(t, tc.server)
			c := dial(t, srv, tc.proto(), fastBackoff())
			ctx := testutil.Context(t)
			book, err := c.Subscribe(ctx, []string{tc.book})
			require.NoError(t, err)
			require.NoError(t, srv.WaitSubscribers(ctx, tc.book, 1))
			drainEvents(c)

			steps := []struct {
				id, prev uint64
				gap      bool
			}{
				{100, 0, false},   // snapshot
				{101, 100, false}, // follows on
				{105, 101, false},
				{110, 107, true}, // 106..107 lost upstream
				{111, 110, false},
			}
			for _, s := range steps {
				srv.Publish(tc.book, tc.update(s.id, s.prev))
			}
			for i, s := range steps {
				m := receive(t, book)
				assert.Equal(t, s.gap, m.Gap(), "update %d (%d after %d)", i, s.id, s.prev)
				assert.False(t, m.Reconnected())
			}
			ev := waitEvent(t, c, client.Gap)
			assert.Equal(t, tc.book, ev.Topic)
			requireNoEvent(t, c, client.Gap, 0)

			// A topic without change ids is not checked, whatever it carries.
			other, err := c.Subscribe(ctx, []string{tc.other})
			require.NoError(t, err)
			require.NoError(t, srv.WaitSubscribers(ctx, tc.other, 1))
			srv.Publish(tc.other, tc.update(1, 0))
			srv.Publish(tc.other, tc.update(50, 7))
			receive(t, other)
			assert.False(t, receive(t, other).Gap())
		})
	}
}

// After a reconnect the change ids start over: the fresh snapshot is
// flagged Reconnected, not Gap.
func TestBookSequenceStartsOverAfterReconnect(t *testing.T) {
	for _, tc := range gapCases {
		t.Run(tc.name, func(t *testing.T) {
			srv := newServer(t, tc.server)
			c := dial(t, srv, tc.proto(), fastBackoff())
			ctx := testutil.Context(t)
			book, err := c.Subscribe(ctx, []string{tc.book})
			require.NoError(t, err)
			require.NoError(t, srv.WaitSubscribers(ctx, tc.book, 1))
			srv.Publish(tc.book, tc.update(100, 0))
			srv.Publish(tc.book, tc.update(101, 100))
			receive(t, book)
			receive(t, book)
			drainEvents(c)

			srv.DropConnections()
			waitEvent(t, c, client.Resubscribed)
			require.NoError(t, srv.WaitSubscribers(ctx, tc.book, 1))
			// An update that names a previous id the client never saw on
			// this connection: the first message is Reconnected only.
			srv.Publish(tc.book, tc.update(500, 499))
			srv.Publish(tc.book, tc.update(501, 500))
			m := receive(t, book)
			assert.True(t, m.Reconnected())
			assert.False(t, m.Gap())
			assert.False(t, receive(t, book).Gap())
			requireNoEvent(t, c, client.Gap, 0)
		})
	}
}

// WithResubscribeOnGap asks the server for a fresh snapshot: the topic is
// unsubscribed and subscribed again, and the stream carries on.
func TestResubscribeOnGap(t *testing.T) {
	for _, tc := range gapCases {
		t.Run(tc.name, func(t *testing.T) {
			srv := newServer(t, tc.server)
			c := dial(t, srv, tc.proto(), fastBackoff(), client.WithResubscribeOnGap(true))
			ctx := testutil.Context(t)
			book, err := c.Subscribe(ctx, []string{tc.book})
			require.NoError(t, err)
			require.NoError(t, srv.WaitSubscribers(ctx, tc.book, 1))
			method := subscribeMethod(tc.name)
			require.Equal(t, 1, srv.CountReceived(method))

			srv.Publish(tc.book, tc.update(100, 0))
			srv.Publish(tc.book, tc.update(105, 103))
			receive(t, book)
			assert.True(t, receive(t, book).Gap())
			waitEvent(t, c, client.Gap)

			require.NoError(t, srv.WaitReceived(ctx, method, 2))
			require.NoError(t, srv.WaitReceived(ctx, tc.unsub, 1))
			require.NoError(t, srv.WaitSubscribers(ctx, tc.book, 1))
			var unsubAt, subAt int
			for i, r := range srv.Received() {
				if i > 0 && contains(r.Data, `"`+tc.unsub+`"`) {
					unsubAt = i
				}
				if i > 0 && contains(r.Data, `"`+method+`"`) {
					subAt = i
				}
			}
			assert.Less(t, unsubAt, subAt, "unsubscribe, then subscribe")

			// The fresh snapshot names no previous id: no gap.
			srv.Publish(tc.book, tc.update(200, 0))
			srv.Publish(tc.book, tc.update(201, 200))
			assert.False(t, receive(t, book).Gap())
			assert.False(t, receive(t, book).Gap())
			assert.Equal(t, 2, srv.CountReceived(method), "one refresh per gap")
		})
	}
}
