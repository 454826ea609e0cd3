package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/ethereal"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/thalex"
)

func TestSubscribeReceivesInOrderOnEveryDialect(t *testing.T) {
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			srv := newServer(t, d.server)
			c := dial(t, srv, d.proto())
			ctx := testutil.Context(t)

			sub, err := c.Subscribe(ctx, []string{d.topics[0], d.topics[1]})
			require.NoError(t, err)
			require.NoError(t, srv.WaitSubscribers(ctx, d.topics[0], 1))
			require.NoError(t, srv.WaitSubscribers(ctx, d.topics[1], 1))

			for i := 1; i <= 50; i++ {
				topic := d.topics[i%2]
				srv.Publish(topic, payload(d.name, topic, i))
			}
			for i := 1; i <= 50; i++ {
				m := receive(t, sub)
				assert.Equal(t, d.topics[i%2], m.Topic)
				assert.Equal(t, uint64(i), m.Seq)
				var v struct {
					N int `json:"n"`
				}
				if d.name == "ethereal" {
					var frame struct {
						Data struct{ N int } `json:"data"`
					}
					require.NoError(t, m.Decode(&frame))
					v.N = frame.Data.N
				} else {
					require.NoError(t, m.Decode(&v))
				}
				assert.Equal(t, i, v.N)
			}

			require.NoError(t, sub.Unsubscribe(ctx))
			_, open := <-sub.C()
			assert.False(t, open, "channel closed after Unsubscribe")
			require.NoError(t, srv.WaitSubscribers(ctx, d.topics[0], 0))
		})
	}
}

// payload builds a notification payload numbered n; Ethereal's carries
// the symbol its routing needs.
func payload(dialect, topic string, n int) []byte {
	if dialect == "ethereal" {
		sym := topic[len(topic)-6:]
		return fmt.Appendf(nil, `{"s":%q,"n":%d}`, sym, n)
	}
	return fmt.Appendf(nil, `{"n":%d,"price":68000.5}`, n)
}

func TestSubscribeBatchesNewTopicsIntoFewFrames(t *testing.T) {
	for _, d := range dialects {
		if d.name == "ethereal" {
			continue // no batches: one frame per topic, in one flush
		}
		t.Run(d.name, func(t *testing.T) {
			srv := newServer(t, d.server)
			c := dial(t, srv, d.proto())
			srv.ResetReceived()
			topics := make([]string, 100)
			for i := range topics {
				topics[i] = fmt.Sprintf("ticker.I%d-PERPETUAL.raw", i)
				if d.name == "ethereum" {
					topics[i] = fmt.Sprintf(`["logs",{"address":"0x%x"}]`, i)
				}
			}
			_, err := c.Subscribe(testutil.Context(t), topics)
			require.NoError(t, err)
			method := "public/subscribe"
			if d.name == "ethereum" {
				method = "eth_subscribe"
			}
			// One frame, or as few as the dialect's limits allow (20 calls
			// a batch for Ethereum).
			assert.Equal(t, restoreFrames(t, d.proto(), topics, 0), srv.CountReceived(method))
		})
	}
}

func TestRefusedTopicIsNamed(t *testing.T) {
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			srv := newServer(t, d.server)
			srv.SetRefused(d.topics[1])
			c := dial(t, srv, d.proto())
			ctx := testutil.Context(t)

			sub, err := c.Subscribe(ctx, []string{d.topics[0], d.topics[1]})
			require.Nil(t, sub)
			var refused *client.RefusedError
			require.ErrorAs(t, err, &refused)
			assert.Equal(t, []string{d.topics[1]}, refused.Topics)
			assert.ErrorIs(t, err, client.ErrRefused)
			assert.Contains(t, err.Error(), d.topics[1])

			// The accepted topic was released again; the table is clean.
			require.NoError(t, srv.WaitSubscribers(ctx, d.topics[0], 0))
			sub, err = c.Subscribe(ctx, []string{d.topics[0]})
			require.NoError(t, err)
			require.NoError(t, sub.Unsubscribe(ctx))
		})
	}
}

func TestCallCorrelatesResultsAndErrors(t *testing.T) {
	for _, d := range dialects {
		if d.name == "ethereal" {
			continue
		}
		t.Run(d.name, func(t *testing.T) {
			srv := newServer(t, d.server)
			srv.Handle("echo", func(params json.RawMessage) (any, *protocol.Error) { return params, nil })
			srv.Handle("fail", func(json.RawMessage) (any, *protocol.Error) {
				return nil, &protocol.Error{Code: 10001, Message: "insufficient funds"}
			})
			c := dial(t, srv, d.proto())
			ctx := testutil.Context(t)

			var out map[string]int
			require.NoError(t, c.Call(ctx, "echo", map[string]int{"a": 1}, &out))
			assert.Equal(t, map[string]int{"a": 1}, out)

			raw, err := c.CallRaw(ctx, "echo", []byte(`[1,2,3]`))
			require.NoError(t, err)
			assert.JSONEq(t, `[1,2,3]`, string(raw))

			err = c.Call(ctx, "fail", nil, nil)
			var rpcErr *client.RPCError
			require.ErrorAs(t, err, &rpcErr)
			assert.Equal(t, 10001, rpcErr.Code)
			assert.Equal(t, "insufficient funds", rpcErr.Message)

			err = c.Call(ctx, "no/such/method", nil, nil)
			require.ErrorAs(t, err, &rpcErr)
			assert.Equal(t, -32601, rpcErr.Code)
		})
	}
}

func TestEtherealHasNoCalls(t *testing.T) {
	srv := newServer(t, ethereal.Name)
	c := dial(t, srv, dialects[3].proto())
	err := c.Call(testutil.Context(t), "anything", nil, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not supported")
}

func TestTwoSubscriptionsOfOneTopicEachGetEveryMessage(t *testing.T) {
	srv := newServer(t, thalex.Name)
	c := dial(t, srv, dialects[0].proto())
	ctx := testutil.Context(t)
	topic := dialects[0].topics[0]

	a, err := c.Subscribe(ctx, []string{topic})
	require.NoError(t, err)
	srv.ResetReceived()
	b, err := c.Subscribe(ctx, []string{topic})
	require.NoError(t, err)
	assert.Equal(t, 0, srv.CountReceived("public/subscribe"), "a shared topic is subscribed upstream once")

	for i := 1; i <= 10; i++ {
		srv.Publish(topic, payload("thalex", topic, i))
	}
	for i := 1; i <= 10; i++ {
		assert.Equal(t, uint64(i), receive(t, a).Seq)
		assert.Equal(t, uint64(i), receive(t, b).Seq)
	}
	require.NoError(t, a.Unsubscribe(ctx))
	assert.Equal(t, 0, srv.CountReceived("unsubscribe"), "still held by b")
	srv.Publish(topic, payload("thalex", topic, 11))
	assert.Equal(t, uint64(11), receive(t, b).Seq)
	require.NoError(t, b.Unsubscribe(ctx))
	assert.Equal(t, 1, srv.CountReceived("unsubscribe"))
	assert.ErrorIs(t, b.Unsubscribe(ctx), client.ErrUnsubscribed)
}

func TestCloseFailsPendingCallsAndClosesSubscriptions(t *testing.T) {
	srv := newServer(t, thalex.Name)
	srv.Handle("slow", func(json.RawMessage) (any, *protocol.Error) { return "late", nil })
	c := dial(t, srv, dialects[0].proto())
	ctx := testutil.Context(t)
	sub, err := c.Subscribe(ctx, []string{dialects[0].topics[0]})
	require.NoError(t, err)

	srv.SetResponseDelay(time.Hour)
	errc := make(chan error, 1)
	go func() { errc <- c.Call(ctx, "slow", nil, nil) }()
	require.Eventually(t, func() bool { return srv.CountReceived("slow") == 1 }, 5*time.Second, time.Millisecond)

	require.NoError(t, c.Close())
	assert.ErrorIs(t, <-errc, client.ErrClosed)
	_, open := <-sub.C()
	assert.False(t, open)
	_, open = <-sub.Err()
	assert.False(t, open, "Err closes without a value on Close")
	assert.Equal(t, client.StateClosed, c.State())
	assert.ErrorIs(t, c.Call(ctx, "slow", nil, nil), client.ErrClosed)
	_, err = c.Subscribe(ctx, []string{"x"})
	assert.True(t, errors.Is(err, client.ErrClosed))
}

func TestUnsubscribeReportsAnUnansweredRequest(t *testing.T) {
	srv := newServer(t, thalex.Name)
	c := dial(t, srv, dialects[0].proto())
	sub, err := c.Subscribe(testutil.Context(t), []string{"ticker.A.raw"})
	require.NoError(t, err)

	srv.SetResponseDelay(2 * time.Second)
	ctx, cancel := context.WithTimeout(testutil.Context(t), 50*time.Millisecond)
	defer cancel()
	err = sub.Unsubscribe(ctx)
	assert.ErrorIs(t, err, client.ErrTimeout)
	_, open := <-sub.C()
	assert.False(t, open, "the subscription ends even when the server is slow to confirm")
}

func TestSubscribeTimesOutThenWorks(t *testing.T) {
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			srv := newServer(t, d.server)
			reg := prometheus.NewRegistry()
			c := dial(t, srv, d.proto(), client.WithMetrics(reg, "x"))

			srv.SetResponseDelay(100 * time.Millisecond)
			ctx, cancel := context.WithTimeout(testutil.Context(t), 20*time.Millisecond)
			defer cancel()
			_, err := c.Subscribe(ctx, d.topics)
			assert.ErrorIs(t, err, client.ErrTimeout)

			// The late acknowledgements find no request: each is counted
			// and dropped, and the connection lives on.
			unknown := map[string]string{"connection": "x", "reason": "unknown_id"}
			require.Eventually(t, func() bool { return metric(t, reg, "wsfan_client_dropped_total", unknown) > 0 },
				5*time.Second, time.Millisecond)
			srv.SetResponseDelay(0)
			sub, err := c.Subscribe(testutil.Context(t), d.topics)
			require.NoError(t, err)
			srv.Publish(d.topics[0], payload(d.name, d.topics[0], 1))
			assert.Equal(t, uint64(1), receive(t, sub).Seq)
			assert.Equal(t, client.StateConnected, c.State())
		})
	}
}

// An error names the package once, however it was wrapped.
func TestErrorsNameThePackageOnce(t *testing.T) {
	srv := exchangetest.NewServer(thalex.Name)
	t.Cleanup(srv.Close)
	c := dial(t, srv, thalex.Protocol(thalex.WithNotices(false)))
	require.NoError(t, c.Close())

	_, err := c.CallRaw(testutil.Context(t), "public/get_time", nil)
	require.ErrorIs(t, err, client.ErrClosed)
	require.Equal(t, "call public/get_time: wsfan: client closed", err.Error())

	_, err = c.Subscribe(testutil.Context(t), []string{"ticker.BTC-PERPETUAL.raw"})
	require.ErrorIs(t, err, client.ErrClosed)
	require.Equal(t, 1, strings.Count(err.Error(), "wsfan:"), err.Error())
}
