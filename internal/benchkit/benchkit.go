// Package benchkit measures what benchmarks report about their own
// process: memory in use and CPU time. Benchmarks of several modules
// (pkg/sidecar, bench/peers) share it.
package benchkit

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// MemInUse is the process's heap and stacks in use after two garbage
// collections: what a benchmark of memory per client or topic compares
// before and after.
func MemInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse + m.StackInuse
}

// ProcessCPU is the process's user and system CPU time so far, or 0 where
// the system does not say.
func ProcessCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// WriteCalls is how many write system calls (write, writev, send...) the
// process has made so far, from Linux's /proc/self/io (syscw), or 0 where
// the system does not say: what a fan-out benchmark divides by its
// deliveries to tell one write a delivery from frames sent together.
func WriteCalls() uint64 {
	data, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(data)) {
		if v, ok := strings.CutPrefix(line, "syscw:"); ok {
			n, _ := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}
