package sidecar_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/clock"
	"github.com/wsfan/wsfan/internal/latency"
	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/deribit"
	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/sidecar"
)

// TestLatencyThroughTheSidecar: with the sidecar's receive clock a fake
// one, a venue stamping every message 50 ms before it is read is
// observed at exactly 50 ms in the sidecar's
// wsfan_upstream_delay_seconds and in the SDK's behind it (on the same
// fake clock), each sampling its first and one in 8 after; stamping 50 ms ahead counts each message in
// wsfan_clock_skew_total and delivers every one. Programs behind the
// sidecar — a WebSocket client with notify=stamps, SSE streams with
// stamps=1 in both event forms, the SDK under WithStamps — each read the
// venue's stamp and the sidecar's receive stamp of every message, and
// the delivery delay is observed for each transport.
func TestLatencyThroughTheSidecar(t *testing.T) {
	dc := dialects[1]
	require.Equal(t, deribit.Name, dc.d.String())
	clk := clock.NewFake(time.Now().Truncate(time.Millisecond)) // never moved: sends come after it
	reg := prometheus.NewRegistry()
	r := newRig(t, dc.d, func(c *sidecar.Config) {
		c.Registry = reg
		c.UpstreamOptions = []client.Option{client.WithReadClock(clk.Now)}
	})
	ctx := testutil.Context(t)
	ws := r.dialWith(t, "?notify=stamps", nil)
	subscribeAll(t, dc, ws)
	stream := func(q string) *sseReader {
		return openSSE(t, r.url+"/v1/stream?topic="+url.QueryEscape(dc.topic)+q, "")
	}
	data := func(st *sseReader) []byte { // the next event's, past the opening comment
		for {
			if ev := st.next(t); ev.data != "" {
				return []byte(ev.data)
			}
		}
	}
	sse, named := stream("&stamps=1"), stream("&stamps=1&event=topic")
	sdkReg := prometheus.NewRegistry()
	sdk, err := client.Dial(ctx, r.wsURL(), client.WithProtocol(deribit.Protocol(deribit.WithHeartbeat(0))),
		client.WithStamps(), client.WithReadClock(clk.Now), client.WithMetrics(sdkReg, "sidecar"))
	require.NoError(t, err)
	defer func() { _ = sdk.Close() }()
	sub, err := sdk.Subscribe(ctx, []string{dc.topic})
	require.NoError(t, err)
	r.waitClients(t, 4, 1)

	type wsfan struct {
		Venue int64 `json:"venue_ns"`
		Recv  int64 `json:"recv_ns"`
		Send  int64 `json:"send_ns"`
	}
	send := func(i int, offset time.Duration) {
		t.Helper()
		venue := clk.Now().Add(offset)
		payload := fmt.Sprintf(`{"timestamp":%d,"i":%d}`, venue.UnixMilli(), i)
		r.up.Publish(dc.topic, []byte(payload))
		want := wsfan{Venue: venue.UnixNano(), Recv: clk.Now().UnixNano()}

		_, st, ok := protocol.CutStamps([]byte(testutil.Recv(t, ws)))
		require.True(t, ok)
		require.Equal(t, want, wsfan{Venue: st.Venue, Recv: st.Recv}, "WebSocket, notify=stamps")

		var ev struct {
			Topic string          `json:"topic"`
			Data  json.RawMessage `json:"data"`
			Wsfan wsfan           `json:"wsfan"`
		}
		require.NoError(t, json.Unmarshal(data(sse), &ev))
		require.JSONEq(t, payload, string(ev.Data))
		require.NotZero(t, ev.Wsfan.Send)
		ev.Wsfan.Send = 0
		require.Equal(t, want, ev.Wsfan, "SSE, stamps=1")

		var inPayload struct {
			I     int   `json:"i"`
			Wsfan wsfan `json:"wsfan"`
		}
		require.NoError(t, json.Unmarshal(data(named), &inPayload))
		require.Equal(t, i, inPayload.I)
		inPayload.Wsfan.Send = 0
		require.Equal(t, want, inPayload.Wsfan, "SSE, stamps=1&event=topic: in the payload")

		select {
		case m := <-sub.C():
			require.Equal(t, venue, m.ExchangeTime)
			require.Equal(t, clk.Now(), m.UpstreamRecvTime, "the SDK reads the sidecar's receive stamp")
			require.JSONEq(t, payload, string(m.Data))
		case <-ctx.Done():
			t.Fatal("the SDK got nothing")
		}
	}

	for i := range 9 { // the upstream delay samples the 1st and the 9th (pkg/client)
		send(i, -50*time.Millisecond)
	}
	for _, g := range []prometheus.Gatherer{reg, sdkReg} {
		rs, err := latency.Read(g, "wsfan_upstream_delay_seconds")
		require.NoError(t, err)
		require.Len(t, rs, 1)
		require.Equal(t, protocol.Family(dc.topic), rs[0].Labels["family"])
		require.EqualValues(t, 2, rs[0].Count)
		require.InDelta(t, 2*0.050, rs[0].Sum, 1e-9, "each observed at 50 ms")
	}
	require.Equal(t, 0.0, counter(t, reg, latency.SkewName, "connection=upstream,path=upstream"))

	for i := range 8 {
		send(9+i, 50*time.Millisecond) // every one delivered: send read it everywhere; the 17th sampled
	}
	require.Equal(t, 8.0, counter(t, reg, latency.SkewName, "connection=upstream,path=upstream"))
	require.Equal(t, 8.0, counter(t, sdkReg, latency.SkewName, "connection=sidecar,path=upstream"))
	rs, err := latency.Read(reg, "wsfan_upstream_delay_seconds", "wsfan_sidecar_delivery_delay_seconds")
	require.NoError(t, err)
	got := map[string]uint64{}
	for _, r := range rs {
		got[r.Name+"{"+r.LabelString()+"}"] = r.Count
		if r.Name == "wsfan_upstream_delay_seconds" {
			require.InDelta(t, 2*0.050-0.050, r.Sum, 1e-9, "a stamp ahead observed negative, not clamped")
		}
	}
	require.Equal(t, map[string]uint64{
		"wsfan_upstream_delay_seconds{connection=upstream,family=" + protocol.Family(dc.topic) + "}": 3,  // sampled
		"wsfan_sidecar_delivery_delay_seconds{transport=websocket}":                                  17, // every message
		"wsfan_sidecar_delivery_delay_seconds{transport=sse}":                                        17,
	}, got)
}

// counter is the value of counter name's series whose labels read
// labels (name=value pairs, sorted, comma-separated).
func counter(t *testing.T, g prometheus.Gatherer, name, labels string) float64 {
	t.Helper()
	families, err := g.Gather()
	require.NoError(t, err)
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			r := latency.Reading{Labels: map[string]string{}}
			for _, l := range m.GetLabel() {
				r.Labels[l.GetName()] = l.GetValue()
			}
			if r.LabelString() == labels {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

// The status shows each delay histogram's p50 and p99: a venue stamping
// every message 50 ms before the sidecar (on a fake receive clock) reads
// it reads 50 ms in /v1/status (within a native bucket's width) and on
// the status stream the page draws; the delivery's series are there for
// both transports, and the page has the table that shows them.
func TestDelaysOnTheStatus(t *testing.T) {
	dc := dialects[1]
	clk := clock.NewFake(time.Now().Truncate(time.Millisecond))
	r := newRig(t, dc.d, func(c *sidecar.Config) {
		c.UpstreamOptions = []client.Option{client.WithReadClock(clk.Now)}
	})
	ws := r.dial(t)
	subscribeAll(t, dc, ws)
	r.waitClients(t, 1, 1)
	for i := range 9 {
		r.up.Publish(dc.topic, []byte(fmt.Sprintf(`{"timestamp":%d,"i":%d}`, clk.Now().Add(-50*time.Millisecond).UnixMilli(), i)))
		testutil.Recv(t, ws)
	}

	code, body := httpGet(t, r.url+"/v1/status")
	require.EqualValues(t, 200, code)
	var st sidecar.Status
	require.NoError(t, json.Unmarshal([]byte(body), &st))
	byName := map[string]sidecar.DelayStatus{}
	for _, d := range st.Delays {
		byName[d.Name+"{"+d.Labels+"}"] = d
	}
	up := byName["wsfan_upstream_delay_seconds{connection=upstream,family="+protocol.Family(dc.topic)+"}"]
	require.EqualValues(t, 2, up.Count, "the 1st and the 9th sampled: %+v", st.Delays)
	require.InEpsilon(t, 0.050, up.P50, 0.1)
	require.InEpsilon(t, 0.050, up.P99, 0.1)
	require.EqualValues(t, 9, byName["wsfan_sidecar_delivery_delay_seconds{transport=websocket}"].Count)
	require.Contains(t, byName, "wsfan_sidecar_delivery_delay_seconds{transport=sse}")
	require.Len(t, st.Delays, 3, "no NATS hop outside a group")

	ev := openSSE(t, r.url+"/v1/status/stream", "").next(t)
	require.Contains(t, ev.data, `"delays":[`)
	_, page := httpGet(t, r.url+"/")
	require.Contains(t, page, `<table id="delays">`)
	require.Contains(t, page, `st.delays`)
}
