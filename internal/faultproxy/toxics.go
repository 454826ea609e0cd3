package faultproxy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	// Silence the package-level zerolog logger some toxics (bandwidth)
	// write to; see init.
	"github.com/rs/zerolog"
	zlog "github.com/rs/zerolog/log"
)

// init silences zerolog's global logger, which toxiproxy's bandwidth toxic
// writes to directly (to stderr) instead of the proxy's logger. wsfan logs
// with zap, so nothing else in a test binary uses it; it runs before any
// proxy starts, so it races with no reader.
func init() { zlog.Logger = zerolog.Nop() }

// Toxic names: one of each kind at a time, so a second call of a method
// with arguments replaces the toxic of the first.
const (
	blackholeName = "faultproxy_blackhole"
	resetPeerName = "faultproxy_reset_peer"
	latencyName   = "faultproxy_latency"
	bandwidthName = "faultproxy_bandwidth"
	slicerName    = "faultproxy_slicer"
	limitDataName = "faultproxy_limit_data"
	drainName     = "faultproxy_drain" // see Proxy.disable
)

// Blackhole silently drops all data in both directions while connections
// stay open (a "timeout" toxic with timeout 0). It applies at once to the
// connections already open as well as to new ones. Removing it (Heal)
// closes the connections it held.
func (p *Proxy) Blackhole() {
	p.t.Helper()
	p.both(blackholeName, "timeout", map[string]any{"timeout": 0})
}

// ResetPeer resets connections with a TCP RST (a "reset_peer" toxic with
// timeout 0, both directions): a connection is reset as soon as data
// arrives from either side. Connections opened after the call are reset
// with RST; connections already open when it is called are only closed
// (FIN, so their peers read EOF), since Toxiproxy sets SO_LINGER 0 when a
// connection starts.
func (p *Proxy) ResetPeer() {
	p.t.Helper()
	p.both(resetPeerName, "reset_peer", map[string]any{"timeout": 0})
}

// Latency delays all data from the upstream to the client by d (a
// "latency" toxic downstream, in whole milliseconds, rounded up).
func (p *Proxy) Latency(d time.Duration) {
	p.t.Helper()
	if d < 0 {
		p.t.Fatalf("faultproxy: Latency(%v): negative", d)
	}
	ms := (d + time.Millisecond - 1) / time.Millisecond
	p.set(latencyName, "latency", "downstream", map[string]any{"latency": int64(ms)})
}

// Jitter delays all data from the upstream to the client by d, give or
// take up to jitter, drawn anew for each chunk Toxiproxy reads (a
// "latency" toxic downstream with its jitter; the stream keeps its
// order). It replaces a Latency.
func (p *Proxy) Jitter(d, jitter time.Duration) {
	p.t.Helper()
	if d < 0 || jitter < 0 || jitter > d {
		p.t.Fatalf("faultproxy: Jitter(%v, %v): want 0 <= jitter <= d", d, jitter)
	}
	p.set(latencyName, "latency", "downstream", map[string]any{"latency": d.Milliseconds(), "jitter": jitter.Milliseconds()})
}

// Bandwidth caps data from the upstream to the client at kbps kilobytes
// per second (a "bandwidth" toxic downstream). kbps must be positive.
func (p *Proxy) Bandwidth(kbps int64) {
	p.t.Helper()
	if kbps <= 0 {
		p.t.Fatalf("faultproxy: Bandwidth(%d): want a positive rate", kbps)
	}
	p.set(bandwidthName, "bandwidth", "downstream", map[string]any{"rate": kbps})
}

// Slicer splits data from the upstream to the client into pieces of about
// avgSize bytes (at least avgSize/2), each followed by a pause of delay
// microseconds (a "slicer" toxic downstream). avgSize must be positive and
// delay not negative.
func (p *Proxy) Slicer(avgSize, delay int) {
	p.t.Helper()
	if avgSize <= 0 || delay < 0 {
		p.t.Fatalf("faultproxy: Slicer(%d, %d): want avgSize > 0 and delay >= 0", avgSize, delay)
	}
	p.set(slicerName, "slicer", "downstream", map[string]any{
		"average_size": avgSize, "size_variation": 0, "delay": delay,
	})
}

// LimitData closes each connection once n bytes have gone from the
// upstream to the client over it (a "limit_data" toxic downstream; for
// connections already open, the count starts when the toxic is added).
func (p *Proxy) LimitData(n int64) {
	p.t.Helper()
	if n < 0 {
		p.t.Fatalf("faultproxy: LimitData(%d): negative", n)
	}
	p.set(limitDataName, "limit_data", "downstream", map[string]any{"bytes": n})
}

// both adds a toxic of kind typ in both directions, named name plus the
// direction, unless it is already there.
func (p *Proxy) both(name, typ string, attrs map[string]any) {
	p.t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.bothLocked(name, typ, attrs); err != nil {
		p.t.Fatalf("faultproxy: %v", err)
	}
}

// bothLocked is both for a caller holding p.mu, reporting errors instead of
// failing the test, so that it may run on any goroutine.
func (p *Proxy) bothLocked(name, typ string, attrs map[string]any) error {
	for _, stream := range []string{"upstream", "downstream"} {
		if err := p.setLocked(name+"_"+stream, typ, stream, attrs, false); err != nil {
			return err
		}
	}
	return nil
}

// set adds the toxic called name, of kind typ on stream, with attrs,
// replacing the one already there. It fails the test on error.
func (p *Proxy) set(name, typ, stream string, attrs map[string]any) {
	p.t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.setLocked(name, typ, stream, attrs, true); err != nil {
		p.t.Fatalf("faultproxy: %v", err)
	}
	if holdsData[typ] {
		// Registered at every set, so that it runs before the cleanups of
		// every client dialled before this set; the later ones find the
		// toxic gone and do nothing.
		p.t.Cleanup(func() { p.removeAtEnd(name) })
	}
}

// holdsData are the kinds of toxic that keep a connection's data back for a
// while (latency and jitter, bandwidth, slicer).
//
// Toxiproxy v2.5.0 deadlocks when a toxic is added or removed after such a
// toxic took data for a connection whose client has gone: the toxic hands
// the data to a writer that has stopped reading (toxics/latency.go), the
// change waits for the toxic under the collection's lock
// (toxic_collection.go, chainAddToxic), and the writer waits for that lock
// to remove its link (link.go, write). A test's clients usually close in
// their cleanups, before the proxy's own cleanup drains it, so a toxic of
// these kinds is removed by a cleanup registered when it is set: it runs
// before the cleanups of the clients dialled earlier, while they still read.
// A client dialled after the toxic was set closes before that, and a test
// that starts the proxy and sets the toxic in different (sub)tests gets
// the removal at the end of the proxy's test: in both cases the removal
// may meet the deadlock, so it gives up after drainTimeout and says so.
// (One run of TestStandbyLosesNothingWhenALegDies/thalex/ticker/latency
// deadlocked so, a 200 ms jitter holding the server's answer to the
// client's close when the proxy was drained.)
var holdsData = map[string]bool{"latency": true, "bandwidth": true, "slicer": true}

// removeAtEnd removes the toxic called name, if it is still there, when the
// test ends; see holdsData. Like disable, it waits at most drainTimeout for
// Toxiproxy, and reports a deadlock rather than hang the test.
func (p *Proxy) removeAtEnd(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	done := make(chan error, 1)
	go p.owner.do(func(ctx context.Context) {
		var err error
		if p.tp.Toxics.GetToxic(name) != nil {
			err = p.tp.Toxics.RemoveToxic(ctx, name)
		}
		done <- err
	})
	select {
	case err := <-done:
		if err != nil {
			p.t.Errorf("faultproxy: removing toxic %s at the end of the test: %v", name, err)
		}
	case <-time.After(drainTimeout):
		p.t.Errorf("faultproxy: removing toxic %s at the end of the test still blocks after %v"+
			" (a client dialled after it was set closed while it held data?)", name, drainTimeout)
	}
}

// setLocked adds the toxic called name, of kind typ on stream, with attrs,
// for a caller holding p.mu. If the toxic is already there it removes it
// first when replace is set, and otherwise leaves it alone. (Toxiproxy's
// own UpdateToxicJson writes the attributes while the connections' toxics
// read them: a data race.)
func (p *Proxy) setLocked(name, typ, stream string, attrs map[string]any, replace bool) error {
	body, err := json.Marshal(map[string]any{
		"name": name, "type": typ, "stream": stream, "toxicity": 1.0, "attributes": attrs,
	})
	if err != nil {
		return fmt.Errorf("toxic %s: %w", name, err)
	}
	p.owner.do(func(ctx context.Context) {
		if p.tp.Toxics.GetToxic(name) != nil {
			if !replace {
				return
			}
			if err = p.tp.Toxics.RemoveToxic(ctx, name); err != nil {
				return
			}
		}
		_, err = p.tp.Toxics.AddToxicJson(bytes.NewReader(body))
	})
	if err != nil {
		return fmt.Errorf("toxic %s: %w", name, err)
	}
	return nil
}
