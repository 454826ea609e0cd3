package reliability_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/wsfan/wsfan/internal/faultproxy"
	"github.com/wsfan/wsfan/pkg/client"
)

// The faults of the table, with the magnitudes it uses.
var tableFaults = []fault{
	{"blackhole", func(p *faultproxy.Proxy) { p.Blackhole() }},
	{"reset_peer", func(p *faultproxy.Proxy) { p.ResetPeer() }},
	{"down", func(p *faultproxy.Proxy) { p.Down() }},
	{"latency 5s", func(p *faultproxy.Proxy) { p.Latency(5 * time.Second) }},
	{"bandwidth 5 KB/s", func(p *faultproxy.Proxy) { p.Bandwidth(5) }},
	{"slicer 64 B / 100 µs", func(p *faultproxy.Proxy) { p.Slicer(64, 100) }},
	{"limit_data 64 KB", func(p *faultproxy.Proxy) { p.LimitData(64 << 10) }},
}

// fast are settings scaled down for CI: the same code paths, every
// timing a tenth or less of the defaults.
var fast = settings{
	client: []client.Option{
		client.WithPing(100*time.Millisecond, 300*time.Millisecond),
		client.WithReconnectWait(10*time.Millisecond, 200*time.Millisecond),
		client.WithDialTimeout(time.Second),
	},
	warm:    500 * time.Millisecond,
	hold:    1500 * time.Millisecond,
	settle:  10 * time.Second,
	callTTL: 500 * time.Millisecond,
}

// Under each fault that cuts or stalls the link, on both routes: the
// loss is noticed, the stream comes back once healed with every topic,
// every hole is marked, and no call reaches the exchange after its
// caller gave up. Timings are measured by TestTable, not asserted here.
func TestFaults(t *testing.T) {
	faults := []fault{tableFaults[0], tableFaults[1], tableFaults[2],
		{"latency 1s", func(p *faultproxy.Proxy) { p.Latency(time.Second) }}}
	for rt := range routes {
		for _, f := range faults {
			t.Run(rt.String()+"/"+f.name, func(t *testing.T) {
				res := run(t, rt, f, fast)
				t.Logf("%+v\nnoticed as: %s\nlast call error: %v", res, res.cause, res.lastErr)
				assert.NotZero(t, res.noticed, "the fault was noticed")
				assert.True(t, res.restored, "every topic delivers again after the heal")
				assert.Zero(t, res.unmarked, "every hole is marked on the message after it (%d holes, %d lost)", res.holes, res.lost)
				if rt == viaSidecar {
					assert.NotZero(t, res.wsHoles, "the plain WebSocket program saw the outage")
					assert.Zero(t, res.wsUnmarked, "a gap notice before every hole (%d holes)", res.wsHoles)
					assert.NotZero(t, res.sseHoles, "the SSE stream saw the outage")
					assert.Zero(t, res.sseUnmarked, "every hole marked on the SSE stream (%d holes)", res.sseHoles)
				}
				assert.Zero(t, res.sentLate, "no call reached the exchange after its caller gave up")
				assert.NotZero(t, res.received)
			})
		}
	}
}
