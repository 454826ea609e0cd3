package faultproxy

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// labelKey is the pprof label that marks the goroutines of one proxy.
const labelKey = "faultproxy"

// owners numbers the proxies of the process.
var owners atomic.Uint64

// owner tracks the goroutines Toxiproxy starts for one proxy. Toxiproxy
// offers no way to wait for them, so every call into it that may start a
// goroutine runs under a pprof label unique to the proxy; goroutines
// inherit the labels of the goroutine that starts them, so the goroutine
// profile tells which of them are still running.
type owner struct {
	labels pprof.LabelSet
	match  string // the label as the goroutine profile prints it
}

// newOwner returns an owner with a label of its own.
func newOwner() *owner {
	id := strconv.FormatUint(owners.Add(1), 10)
	return &owner{
		labels: pprof.Labels(labelKey, id),
		match:  strconv.Quote(labelKey) + ":" + strconv.Quote(id),
	}
}

// Stranded are the functions of the goroutines Toxiproxy v2.5.0 is known
// to strand for good when a toxic that holds data back is removed (Heal)
// while the connection under it has died: the latency toxic's Interrupt
// case and the bandwidth toxic's split loop hand data to an output nobody
// reads any more (toxics/latency.go, toxics/bandwidth.go), and the
// goroutines before them in the chain (a noop stub, the link's reader)
// block behind. The reset_peer toxic strands the noop stub before it the
// same way: it closes the connection and returns, leaving the stub
// blocked handing it the next chunk (toxics/reset_peer.go). They hold a
// chunk of a dead connection and nothing else. The cleanup accepts them
// once they are all that is left, for a second; a package whose tests use
// these toxics passes IgnoreStranded to goleak.
var Stranded = []string{
	"github.com/Shopify/toxiproxy/v2/toxics.(*LatencyToxic).Pipe",
	"github.com/Shopify/toxiproxy/v2/toxics.(*BandwidthToxic).Pipe",
	"github.com/Shopify/toxiproxy/v2/toxics.(*NoopToxic).Pipe",
	"github.com/Shopify/toxiproxy/v2/stream.(*ChanWriter).Write",
}

// onlyStranded reports whether the records of a goroutine profile are
// all Stranded's.
func onlyStranded(stacks string) bool {
	for _, record := range strings.Split(strings.TrimSpace(stacks), "\n\n") {
		if !slices.ContainsFunc(Stranded, func(f string) bool { return strings.Contains(record, f) }) {
			return false
		}
	}
	return true
}

// do runs f under the owner's label, so that every goroutine f starts, and
// every goroutine those start, carries it.
func (o *owner) do(f func(context.Context)) {
	pprof.Do(context.Background(), o.labels, f)
}

// wait waits until no goroutine carries the owner's label, or returns an
// error listing those still running after timeout.
func (o *owner) wait(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var strandedSince time.Time
	for delay := time.Millisecond; ; delay = min(2*delay, 50*time.Millisecond) {
		n, stacks := o.running()
		if n == 0 {
			return nil
		}
		switch {
		case !onlyStranded(stacks):
			strandedSince = time.Time{}
		case strandedSince.IsZero():
			strandedSince = time.Now()
		case time.Since(strandedSince) > time.Second:
			return nil // Toxiproxy's own, for good: see Stranded
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d toxiproxy goroutine(s) still running %v after the proxy stopped:\n%s", n, timeout, stacks)
		}
		time.Sleep(delay)
	}
}

// running counts the goroutines carrying the owner's label and returns
// their part of the goroutine profile.
func (o *owner) running() (int, string) {
	var buf bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&buf, 1); err != nil {
		return 0, ""
	}
	// With debug=1 the profile is a header line, then one blank-line
	// separated record per distinct stack: "N @ pc pc ...", an optional
	// "# labels: {...}" line and the frames.
	n := 0
	var stacks strings.Builder
	for _, record := range strings.Split(buf.String(), "\n\n") {
		sc := bufio.NewScanner(strings.NewReader(record))
		var count int
		for sc.Scan() {
			line := sc.Text()
			if head, _, ok := strings.Cut(line, " @ "); ok && count == 0 {
				count, _ = strconv.Atoi(strings.TrimSpace(head))
				continue
			}
			if strings.HasPrefix(line, "# labels: ") && strings.Contains(line, o.match) {
				n += count
				stacks.WriteString(record)
				stacks.WriteString("\n\n")
				break
			}
		}
	}
	return n, stacks.String()
}
