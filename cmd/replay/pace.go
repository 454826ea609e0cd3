package main

import (
	"context"
	"runtime"
	"time"
)

// Pacing at -speed 1 and N. A frame is sent at a deadline, its recorded
// offset divided by the speed from the clock's start, never after a
// sleep per frame (whose lateness would add up).
//
// A Go timer wakes late by up to a millisecond: when nothing else runs,
// the scheduler waits for it in the network poller, whose epoll_wait
// takes whole milliseconds (runtime/netpoll_epoll.go rounds a shorter
// wait up to 1 ms). On a 2-core VM a timer to the deadline was 0.57-0.66
// ms late at the median (BenchmarkPacer, mode=timer). So the player
// sleeps in the kernel instead (sleep: nanosleep(2) on Linux, timed by
// the kernel's high-resolution timers, to within its timer slack, 50 µs
// by default), up to a margin before the deadline, and spins on the
// clock the rest of the way. The margin is the sleep's lateness as it
// shows it, averaged (1/8 of each new one), plus spinSlack, at most
// maxAhead (three times the kernel's timer slack): the spin costs about
// spinSlack of CPU a frame. It is kept short because a spinning thread
// is one the operating system runs less when the machine is busy (a 1-2
// ms spin did worse at p99 than a plain timer on a 2-core VM loaded 9
// deep; 500 and 150 µs were not told apart on it, in
// bench/results/issue48-pacing.txt, and the shorter spin costs less).
// The spin does not yield (runtime.Gosched keeps the scheduler off the
// network poller: a reader in the process waited for sysmon's 10 ms
// poll), except on a single processor (GOMAXPROCS 1), where the writers
// need it. Frames due within sameBatch of now are sent at once: the
// venue sent them as one burst, and a connection's writer joins them
// into one write anyway. A sleep lasts maxSleep at most, so that the
// player sees its context end.

const (
	spinSlack = 50 * time.Microsecond
	maxAhead  = 150 * time.Microsecond
	sameBatch = 50 * time.Microsecond
	maxSleep  = 50 * time.Millisecond
)

// pacer waits for each frame's deadline. It is owned by the playing
// goroutine.
type pacer struct {
	start time.Time
	speed float64       // > 0
	late  time.Duration // the sleep's lateness, averaged
	ahead time.Duration // how long before a deadline the sleep ends
	yield bool          // GOMAXPROCS is 1: spin yielding
}

func newPacer(speed float64) *pacer {
	return &pacer{start: time.Now(), speed: speed, ahead: spinSlack, yield: runtime.GOMAXPROCS(0) < 2}
}

// due is when the frame at offset at is to be sent.
func (p *pacer) due(at time.Duration) time.Time {
	return p.start.Add(time.Duration(float64(at) / p.speed))
}

// wait returns at the deadline of the frame at offset at (or at once
// when it is due within sameBatch), or with ctx's error.
func (p *pacer) wait(ctx context.Context, at time.Duration) error {
	due := p.due(at)
	if time.Until(due) <= sameBatch {
		return ctx.Err()
	}
	for {
		d := min(time.Until(due)-p.ahead, maxSleep)
		if d <= 0 {
			break
		}
		wake := time.Now().Add(d)
		sleep(d)
		p.adapt(time.Since(wake))
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	for time.Until(due) > 0 {
		if p.yield {
			runtime.Gosched()
		}
	}
	return ctx.Err()
}

// adapt takes in how late a sleep ended.
func (p *pacer) adapt(late time.Duration) {
	p.late += (max(late, 0) - p.late) / 8
	p.ahead = min(p.late+spinSlack, maxAhead)
}
