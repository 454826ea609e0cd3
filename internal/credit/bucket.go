// Package credit is the model behind exchanges' request limits: a bucket
// holding at most Max credits, refilled at Rate credits a second, from
// which every request takes its cost. With every cost 1 it is a plain
// request rate with bursts of Max; with costs per method it is Deribit's
// credit system. The client paces its requests with Reserve; the test
// exchange refuses what is over its limit with Take.
package credit

import (
	"math"
	"time"
)

// epsilon forgives the rounding of refills computed from two clocks'
// durations: a request the client paced to the nanosecond is never
// refused for a billionth of a credit.
const epsilon = 1e-6

// Bucket is a credit bucket. It is full when first used. It is not safe
// for concurrent use: its owner serializes calls.
type Bucket struct {
	rate    float64 // credits per second
	max     float64
	credits float64   // as of last; negative when reservations ran ahead
	last    time.Time // zero until first used
}

// New returns a bucket holding at most max credits, refilled at rate
// credits a second. Both must be positive.
func New(rate, max float64) Bucket {
	return Bucket{rate: rate, max: max}
}

// Max returns the most credits the bucket holds.
func (b *Bucket) Max() float64 { return b.max }

// refill adds the credits earned since the last call. A now before the
// last one (concurrent callers reading the clock in a different order)
// earns nothing and does not move the bucket back.
func (b *Bucket) refill(now time.Time) {
	if b.last.IsZero() {
		b.credits, b.last = b.max, now
		return
	}
	if now.After(b.last) {
		b.credits = min(b.max, b.credits+now.Sub(b.last).Seconds()*b.rate)
		b.last = now
	}
}

// Take takes cost credits if the bucket holds them at now, and reports
// whether it did. A refused request takes nothing.
func (b *Bucket) Take(now time.Time, cost float64) bool {
	b.refill(now)
	if b.credits+epsilon < cost {
		return false
	}
	b.credits -= cost
	return true
}

// Reserve takes cost credits at now, running into debt when the bucket
// holds fewer, and returns how long the caller must wait until the debt
// is refilled: 0 when the credits were there. Later reservations queue
// behind earlier ones, so waiting callers go in the order they reserved.
func (b *Bucket) Reserve(now time.Time, cost float64) time.Duration {
	b.refill(now)
	b.credits -= cost
	if b.credits >= 0 {
		return 0
	}
	// Round up to the nanosecond, so the credits are there when the wait
	// is over, forgiving the float error of an exact nanosecond.
	ns := -b.credits / b.rate * float64(time.Second)
	return time.Duration(math.Ceil(ns - 1e-3))
}

// Refund gives back cost credits of a reservation the caller gave up.
// Reservations made after it keep their waits: they only ever wait too
// long, never too short.
func (b *Bucket) Refund(cost float64) {
	b.credits = min(b.max, b.credits+cost)
}
