package credit

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

var t0 = time.Unix(1_700_000_000, 0)

func TestTakeRefusesOverTheLimit(t *testing.T) {
	b := New(50, 2) // 50 a second, bursts of 2
	assert.True(t, b.Take(t0, 1))
	assert.True(t, b.Take(t0, 1))
	assert.False(t, b.Take(t0, 1), "the burst is spent")
	assert.False(t, b.Take(t0.Add(19*time.Millisecond), 1))
	assert.True(t, b.Take(t0.Add(20*time.Millisecond), 1), "one credit refilled in 20ms")
	assert.True(t, b.Take(t0.Add(time.Hour), 2))
	assert.False(t, b.Take(t0.Add(time.Hour), 1), "refills stop at the maximum")
}

// Deribit's default for non-matching-engine requests: 500 credits a
// request, 50,000 at most, 10,000 a second.
func TestTakeCostsPerRequest(t *testing.T) {
	b := New(10_000, 50_000)
	for i := range 100 {
		assert.True(t, b.Take(t0, 500), "request %d of the burst", i)
	}
	assert.False(t, b.Take(t0, 500))
	assert.True(t, b.Take(t0.Add(50*time.Millisecond), 500), "20 requests a second")
}

// Reservations queue: each waits for the credits of everyone before it,
// and a request paced by Reserve is never refused by a Take of the same
// limit, even to the nanosecond.
func TestReserveQueuesAndAgreesWithTake(t *testing.T) {
	client, server := New(50, 1), New(50, 1)
	for i := range 1000 {
		wait := client.Reserve(t0, 1)
		assert.Equal(t, time.Duration(i)*20*time.Millisecond, wait, "request %d", i)
		assert.True(t, server.Take(t0.Add(wait), 1), "request %d arriving after its wait", i)
	}
}

func TestReserveRoundsUp(t *testing.T) {
	b := New(3, 1) // a credit every 333.33...ms
	assert.Zero(t, b.Reserve(t0, 1))
	wait := b.Reserve(t0, 1)
	assert.Equal(t, 333333334*time.Nanosecond, wait)
	server := New(3, 1)
	assert.True(t, server.Take(t0, 1))
	assert.True(t, server.Take(t0.Add(wait), 1))
}

func TestRefundGivesBackCredits(t *testing.T) {
	b := New(1, 1)
	assert.Zero(t, b.Reserve(t0, 1))
	assert.Equal(t, time.Second, b.Reserve(t0, 1))
	b.Refund(1)
	assert.Equal(t, time.Second, b.Reserve(t0, 1), "the refunded credit is reserved again")
	b.Refund(1)
	b.Refund(1)
	b.Refund(1)
	assert.Zero(t, b.Reserve(t0, 1), "refunds stop at the maximum")
	assert.Equal(t, time.Second, b.Reserve(t0, 1))
}

func TestClockGoingBackEarnsNothing(t *testing.T) {
	b := New(1, 1)
	assert.True(t, b.Take(t0.Add(time.Second), 1))
	assert.False(t, b.Take(t0, 1))
	assert.False(t, b.Take(t0.Add(time.Second), 1), "the earlier time did not move the bucket back")
	assert.True(t, b.Take(t0.Add(2*time.Second), 1))
}
