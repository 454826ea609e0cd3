package main

import (
	"syscall"
	"time"
)

// sleep blocks the calling thread in nanosleep(2) for about d: the
// kernel's high-resolution timer ends it, where a Go timer may end up to
// a millisecond late (pace.go). A signal (the runtime's preemption)
// ends it early: the pacer sleeps again for what is left.
func sleep(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	_ = syscall.Nanosleep(&ts, nil)
}
