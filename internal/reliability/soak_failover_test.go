//go:build soak

package reliability_test

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/faultproxy"
	"github.com/wsfan/wsfan/internal/sidecartest"
	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/deribit"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/sidecar"
)

// The failover soak (make soak-failover; the soak tag keeps it out of
// make test): a sidecar with a hot standby (-hot-standby 1) on two
// endpoints, each through a Toxiproxy of its own, in front of a test
// exchange publishing Deribit books every 100 ms (a leg back within a
// round gets a snapshot at a change it saw); programs that asked for
// gap notices read a book while one leg is faulted (down, reset_peer,
// a black hole) and healed, 10 runs a fault. Each program checks its
// stream as a book keeper would: a change that does not follow the one
// before it is a break, marked when a wsfan/gap notice came first; a
// snapshot or change placed before what the program already had is a
// stale book. Unmarked breaks and stale books must be 0.
func TestSoakFailover(t *testing.T) {
	const runs = 10
	for _, fault := range []string{"down", "reset_peer", "blackhole"} {
		var total bookTally
		for run := range runs {
			var got bookTally
			t.Run(fault, func(t *testing.T) { got = soakRun(t, fault) })
			t.Logf("%-10s run %2d: %s", fault, run+1, got)
			total.add(got)
		}
		t.Logf("%-10s %d runs: %s", fault, runs, total)
		assert.Zero(t, total.unmarked, "%s: unmarked breaks", fault)
		assert.Zero(t, total.stale, "%s: stale books", fault)
	}
}

// bookTally is what programs saw of a book: changes, snapshots, breaks
// marked by a notice before them, breaks unmarked, stale messages.
type bookTally struct {
	changes, snapshots, notices, marked, unmarked, stale int
}

func (b *bookTally) add(o bookTally) {
	b.changes += o.changes
	b.snapshots += o.snapshots
	b.notices += o.notices
	b.marked += o.marked
	b.unmarked += o.unmarked
	b.stale += o.stale
}

func (b bookTally) String() string {
	return strings.Join([]string{
		"changes " + itoa(b.changes), "snapshots " + itoa(b.snapshots), "notices " + itoa(b.notices),
		"marked breaks " + itoa(b.marked), "unmarked breaks " + itoa(b.unmarked), "stale " + itoa(b.stale),
	}, ", ")
}

func itoa(n int) string { return strconv.Itoa(n) }

func soakRun(t *testing.T, fault string) bookTally {
	const programs = 10
	const topic = "book.BTC-PERPETUAL.100ms"
	ctx := testutil.Context(t)
	exch := exchangetest.NewServer(deribit.Name)
	t.Cleanup(exch.Close)
	p0, p1 := faultproxy.Start(t, exch.Addr()), faultproxy.Start(t, exch.Addr())
	sc := sidecartest.Serve(t, sidecar.Config{Upstream: p0.URL(exch.URL()), Fallbacks: []string{p1.URL(exch.URL())},
		Protocol: deribit.Name, HotStandby: 1,
		UpstreamPing: 100 * time.Millisecond, UpstreamPingTimeout: 300 * time.Millisecond})
	exch.StartFeed(exchangetest.FeedOptions{}) // a round every 100 ms: a leg often comes back before the book moved
	t.Cleanup(exch.StopFeed)

	runCtx, stop := context.WithCancel(ctx)
	tallies := make([]bookTally, programs)
	var wg sync.WaitGroup
	for p := range programs {
		ws := dialBook(t, ctx, sc.Addr, topic)
		wg.Add(1)
		go func() {
			defer wg.Done()
			tallies[p] = readBook(runCtx, ws)
		}()
	}
	require.NoError(t, exch.WaitSubscribers(ctx, topic, 2), "one upstream subscription a leg")
	sleep(ctx, 500*time.Millisecond)
	cut(p0, fault)
	sleep(ctx, 1500*time.Millisecond)
	p0.Heal()
	sleep(ctx, 1500*time.Millisecond)
	stop()
	wg.Wait()
	var sum bookTally
	for _, tl := range tallies {
		sum.add(tl)
	}
	require.NotZero(t, sum.changes, "the book moved")
	return sum
}

// dialBook is a program behind the sidecar that asked for gap notices,
// subscribed to topic.
func dialBook(t *testing.T, ctx context.Context, addr, topic string) *websocket.Conn {
	t.Helper()
	ws, resp, err := websocket.DefaultDialer.DialContext(ctx, "ws://"+addr+"/ws?notify=gaps", nil)
	require.NoError(t, err)
	_ = resp.Body.Close()
	t.Cleanup(func() { _ = ws.Close() })
	sub, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "public/subscribe",
		"params": map[string]any{"channels": []string{topic}}})
	require.NoError(t, ws.WriteMessage(websocket.TextMessage, sub))
	return ws
}

// readBook reads a program's book until ctx ends and tallies it.
func readBook(ctx context.Context, ws *websocket.Conn) bookTally {
	stop := context.AfterFunc(ctx, func() { _ = ws.Close() })
	defer stop()
	var tl bookTally
	var last int64 // the change id the program's book is at; 0 before its snapshot
	noticed := false
	for {
		_, data, err := ws.ReadMessage()
		if err != nil {
			return tl
		}
		var f struct {
			Method string `json:"method"`
			Params struct {
				Data struct {
					Type     string `json:"type"`
					ChangeID int64  `json:"change_id"`
					Prev     int64  `json:"prev_change_id"`
				} `json:"data"`
			} `json:"params"`
		}
		if json.Unmarshal(data, &f) != nil {
			continue
		}
		switch f.Method {
		case "wsfan/gap":
			tl.notices++
			noticed = true
			continue
		case "subscription":
		default:
			continue
		}
		d := f.Params.Data
		switch {
		case d.Type == "snapshot":
			tl.snapshots++
			if last != 0 && d.ChangeID < last {
				tl.stale++
			}
			last, noticed = d.ChangeID, false
		case last == 0: // a change before the first snapshot: nothing to follow
		case d.ChangeID <= last:
			tl.changes++
			tl.stale++
		case d.Prev != last:
			tl.changes++
			if noticed {
				tl.marked++
			} else {
				tl.unmarked++
			}
			last, noticed = d.ChangeID, false
		default:
			tl.changes++
			last, noticed = d.ChangeID, false
		}
	}
}
