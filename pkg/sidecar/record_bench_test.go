package sidecar_test

import (
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/sidecar"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// BenchmarkFanOutRecording is BenchmarkFanOut's 100 WebSocket clients
// with the upstream recorded (-record) and without, side by side: the
// CPU the whole process spends a delivery (cpu-ns/delivery, from
// getrusage) is what recording costs at the fan-out's rates. Run with
// -count 6 so the two alternate.
func BenchmarkFanOutRecording(b *testing.B) {
	for _, rec := range []bool{false, true} {
		name := "record=off"
		if rec {
			name = "record=on"
		}
		b.Run(name, func(b *testing.B) {
			up := exchangetest.NewServer(thalex.Name)
			defer up.Close()
			var tune func(*sidecar.Config)
			if rec {
				dir := filepath.Join(b.TempDir(), "rec")
				tune = func(c *sidecar.Config) { c.Record = dir }
			}
			sc, url := startBenchSidecar(b, up, tune)
			defer sc.Close()
			const n = 100
			rd := dialReaders(b, url, n, dialects[0].subscribe(1, benchTopic), false)
			defer rd.close()
			waitFor2(b, func() bool { return countAttached(sc) == n })
			msgs := msgsFor(n)
			before := cpuTime(b)
			b.ResetTimer()
			start := time.Now()
			for range b.N {
				pump(b, up, rd, n, msgs)
			}
			b.StopTimer()
			deliveries := float64(n * msgs * b.N)
			b.ReportMetric(deliveries/time.Since(start).Seconds(), "deliveries/s")
			b.ReportMetric(float64((cpuTime(b)-before).Nanoseconds())/deliveries, "cpu-ns/delivery")
			if rec {
				st := sc.Status().Recording
				require.NotNil(b, st)
				b.ReportMetric(float64(st.Dropped), "dropped")
			}
		})
	}
}

// BenchmarkHopLatencyRecording is BenchmarkHopLatency's 100 clients in
// a child process at 5,000 messages a second, with the upstream
// recorded (-record) and without, side by side: what recording adds to
// the hop's latency (p99-µs, added-p99-µs). Run with -count 6 so the two
// alternate.
func BenchmarkHopLatencyRecording(b *testing.B) {
	for _, rec := range []bool{false, true} {
		name := "record=off"
		var tune func(*sidecar.Config)
		if rec {
			name = "record=on"
			dir := filepath.Join(b.TempDir(), "rec")
			tune = func(c *sidecar.Config) { c.Record = dir }
		}
		b.Run(name, func(b *testing.B) { benchHop(b, "process", 5000, tune) })
	}
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	require.NoError(b, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
