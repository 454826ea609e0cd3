// Package benchkit measures what benchmarks report about their own
// process: memory in use and CPU time. Benchmarks of several modules
// (pkg/sidecar, bench/peers) share it.
package benchkit

import (
	"runtime"
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
