package pool_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/exchangetest"
)

// newServer starts a test exchange speaking d, closed with the test.
func newServer(t *testing.T, d exchangetest.Dialect, opts ...exchangetest.Option) *exchangetest.Server {
	t.Helper()
	srv := exchangetest.NewServer(d, opts...)
	t.Cleanup(srv.Close)
	return srv
}

// receive waits for the next message on sub.
func receive(t *testing.T, sub *client.Subscription) client.Message {
	t.Helper()
	select {
	case m, ok := <-sub.C():
		require.True(t, ok, "subscription channel closed")
		return m
	case <-time.After(5 * time.Second):
		t.Fatal("no message within 5s")
		return client.Message{}
	}
}

// payload is the n-th notification of a topic.
func payload(n int) []byte { return fmt.Appendf(nil, `{"n":%d,"price":68000.5}`, n) }

// fastBackoff reconnects within milliseconds.
func fastBackoff() client.Option {
	return client.WithBackoff(func() backoff.BackOff {
		b := backoff.NewExponentialBackOff()
		b.InitialInterval = 5 * time.Millisecond
		b.RandomizationFactor = 0.5
		b.Multiplier = 2
		b.MaxInterval = 20 * time.Millisecond
		b.MaxElapsedTime = 0
		b.Reset()
		return b
	})
}
