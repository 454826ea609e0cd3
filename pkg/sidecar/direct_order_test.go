package sidecar_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/testutil"
)

// 48 WebSocket clients on one topic, messages published a few at a time
// so the pump is mostly caught up: its offers are direct writes split
// over the processors (parallelDirectOffers), and still every client gets
// every message once, in order.
func TestCaughtUpDirectWritesKeepOrder(t *testing.T) {
	dc := dialects[0]
	r := newRig(t, dc.d, nil)
	const clients, n = 48, 500
	conns := make([]*websocket.Conn, clients)
	for i := range conns {
		conns[i] = r.dial(t)
	}
	localID := subscribeAll(t, dc, conns...)
	r.waitClients(t, clients, 1)
	require.NoError(t, r.up.WaitSubscribers(testutil.Context(t), dc.topic, 1))

	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for _, ws := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range n {
				_ = ws.SetReadDeadline(time.Now().Add(10 * time.Second))
				_, got, err := ws.ReadMessage()
				if err != nil {
					errs <- err
					return
				}
				if want := dc.frame(dc.topic, localID, payload(i)); string(got) != want {
					errs <- fmt.Errorf("frame %d: got %s, want %s", i, got, want)
					return
				}
			}
		}()
	}
	for i := range n {
		r.up.Publish(dc.topic, []byte(payload(i)))
		if i%3 == 0 {
			time.Sleep(100 * time.Microsecond)
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}
