package bench

import (
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	l := NewLatencies(1000)
	for i := 1000; i >= 1; i-- { // unsorted on purpose
		l.Add(time.Duration(i) * time.Microsecond)
	}
	for _, c := range []struct {
		p    float64
		want time.Duration
	}{{50, 500}, {90, 900}, {99, 990}, {99.9, 999}, {100, 1000}, {0.01, 1}} {
		if got := l.Percentile(c.p); got != c.want*time.Microsecond {
			t.Errorf("p%v = %v, want %v", c.p, got, c.want*time.Microsecond)
		}
	}
	if got := NewLatencies(0).Percentile(50); got != 0 {
		t.Errorf("empty p50 = %v, want 0", got)
	}
	one := NewLatencies(1)
	one.Add(time.Millisecond)
	if got := one.Percentile(99.9); got != time.Millisecond {
		t.Errorf("single sample p99.9 = %v", got)
	}
}
