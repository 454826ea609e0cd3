package clock

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var t0 = time.Unix(1_700_000_000, 0)

// fired reports whether c has received.
func fired(c <-chan time.Time) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

func TestFakeFiresTimersWhenTimeReachesThem(t *testing.T) {
	f := NewFake(t0)
	soon, _ := f.After(time.Second)
	late, _ := f.After(3 * time.Second)
	now, _ := f.After(0)
	assert.True(t, fired(now), "a timer of 0 fires at once")
	assert.Equal(t, 2, f.Timers())

	f.Advance(999 * time.Millisecond)
	assert.False(t, fired(soon))
	f.Advance(time.Millisecond)
	assert.True(t, fired(soon))
	assert.Equal(t, 1, f.Timers())

	require.True(t, f.AdvanceToNext())
	assert.Equal(t, t0.Add(3*time.Second), f.Now())
	assert.True(t, fired(late))
	assert.False(t, f.AdvanceToNext(), "no timer left")
	assert.Equal(t, t0.Add(3*time.Second), f.Now())
}

func TestFakeStop(t *testing.T) {
	f := NewFake(t0)
	c, stop := f.After(time.Second)
	assert.True(t, stop())
	assert.False(t, stop())
	assert.Zero(t, f.Timers())
	f.Advance(time.Hour)
	assert.False(t, fired(c))
}

func TestFakeWaitTimers(t *testing.T) {
	f := NewFake(t0)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	go f.After(time.Second)
	require.NoError(t, f.WaitTimers(ctx, 1))

	short, cancelShort := context.WithCancel(ctx)
	cancelShort()
	assert.ErrorContains(t, f.WaitTimers(short, 2), "waiting for 2 timers, have 1")
}
