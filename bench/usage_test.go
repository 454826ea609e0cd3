package bench

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"
)

// usage is a process's CPU time and context switches so far, summed over
// its threads from /proc (Linux; elsewhere nothing is reported). A thread
// that exits takes its share with it; the Go runtime rarely ends threads.
type usage struct {
	cpu   time.Duration
	ctxsw int64 // voluntary and involuntary
}

// readUsage reads pid's usage, or reports false where /proc has none.
func readUsage(pid int) (usage, bool) {
	dir := fmt.Sprintf("/proc/%d/task/", pid)
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return usage{}, false
	}
	var u usage
	for _, t := range tasks {
		// schedstat: nanoseconds on a CPU, nanoseconds waiting, time slices.
		sched, err := os.ReadFile(dir + t.Name() + "/schedstat")
		if err != nil {
			continue // the thread exited
		}
		if f := bytes.Fields(sched); len(f) > 0 {
			ns, _ := strconv.ParseInt(string(f[0]), 10, 64)
			u.cpu += time.Duration(ns)
		}
		status, err := os.ReadFile(dir + t.Name() + "/status")
		if err != nil {
			continue
		}
		for line := range bytes.Lines(status) {
			for _, key := range [][]byte{[]byte("voluntary_ctxt_switches:"), []byte("nonvoluntary_ctxt_switches:")} {
				if v, ok := bytes.CutPrefix(line, key); ok {
					n, _ := strconv.ParseInt(string(bytes.TrimSpace(v)), 10, 64)
					u.ctxsw += n
				}
			}
		}
	}
	return u, true
}

// usageProbe measures a process's usage over a benchmark's timed run.
type usageProbe struct {
	pid    int
	prefix string // of the metric names
	start  usage
	ok     bool
}

// startUsage starts measuring pid's usage. prefix names the process in
// the metrics ("" for this one, "server-" for the node server's child).
func startUsage(pid int, prefix string) *usageProbe {
	u, ok := readUsage(pid)
	return &usageProbe{pid: pid, prefix: prefix, start: u, ok: ok}
}

// report adds the CPU time (<prefix>cpu-µs/op) and context switches
// (<prefix>ctxsw/op) per operation since startUsage to b's results. A nil
// probe reports nothing.
func (p *usageProbe) report(b *testing.B, ops int) {
	if p == nil || !p.ok || ops == 0 {
		return
	}
	end, ok := readUsage(p.pid)
	if !ok {
		return
	}
	b.ReportMetric(float64(end.cpu-p.start.cpu)/float64(time.Microsecond)/float64(ops), p.prefix+"cpu-µs/op")
	b.ReportMetric(float64(end.ctxsw-p.start.ctxsw)/float64(ops), p.prefix+"ctxsw/op")
}
