package cadence

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

const ms = int64(time.Millisecond)

func TestEvery(t *testing.T) {
	assert.Equal(t, int64(-1), Every(0, 5*time.Second), "a factor of 0 judges nothing")
	assert.Equal(t, 250*ms, Every(10, 5*time.Second), "the floor over twice the factor")
}

func TestMedianNeedsEverySampleAndSkipsAnOutlier(t *testing.T) {
	var k Rhythm
	now := int64(1_000_000) * ms
	for i := range Samples {
		k.Observe(now, 0)
		assert.Zero(t, k.Median(), "not judged before %d intervals (%d)", Samples, i)
		now += 100 * ms
	}
	k.Observe(now, 0)
	assert.Equal(t, 100*time.Millisecond, k.Median())
	assert.Equal(t, now, k.Last())

	now += 10_000 * ms // one long silence
	k.Observe(now, 0)
	assert.Equal(t, 100*time.Millisecond, k.Median(), "one interval of 16 barely moves the median")
	assert.Equal(t, now, k.Last())

	for range 40 { // the ring wraps: only the last Samples+1 arrivals count
		now += 20 * ms
		k.Observe(now, 0)
	}
	assert.Equal(t, 20*time.Millisecond, k.Median())
}

func TestObserveRecordsAtMostEveryEvery(t *testing.T) {
	var k Rhythm
	start := int64(1_000_000) * ms
	for i := range int64(100) {
		k.Observe(start+i*ms, 10*ms) // a message a millisecond, recorded every tenth
	}
	assert.Equal(t, start+90*ms, k.Last(), "the last recorded arrival, at most every before the true last")
	assert.Zero(t, k.Median(), "10 recorded arrivals are not enough")
	for i := int64(100); i < 200; i++ {
		k.Observe(start+i*ms, 10*ms)
	}
	assert.Equal(t, 10*time.Millisecond, k.Median(), "a topic faster than every is measured at about every")
}

func TestJudgedOncePerSilence(t *testing.T) {
	var k Rhythm
	now := int64(1_000_000) * ms
	k.Observe(now, 0)
	assert.False(t, k.IsStale())
	k.Judge()
	assert.True(t, k.IsStale(), "judged at its last message")
	k.Observe(now+5*ms, 0)
	assert.False(t, k.IsStale(), "a message since ends the judgement")
	k.Judge()
	assert.True(t, k.IsStale())
	k.Restart()
	assert.False(t, k.IsStale(), "a new connection judges afresh")
	assert.Equal(t, now+5*ms, k.Last(), "and keeps the rhythm")
}
