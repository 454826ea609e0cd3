package endpoints

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func list(urls ...string) []Endpoint {
	eps := make([]Endpoint, len(urls))
	for i, u := range urls {
		eps[i] = Endpoint{URL: u, Shown: u}
	}
	return eps
}

func TestNextGoesRoundTheListAndWaitsOnceEveryEndpointFailed(t *testing.T) {
	l := New(list("a", "b", "c"), 0)
	type step struct {
		index int
		wait  bool
	}
	var got []step
	for attempt := 1; attempt <= 6; attempt++ {
		i, wait := l.Next(1, attempt) // b failed
		got = append(got, step{i, wait})
	}
	assert.Equal(t, []step{{2, false}, {0, false}, {1, true}, {2, false}, {0, false}, {1, true}}, got,
		"c, a at once, then b after the wait, and round again")

	one := New(list("a"), 0)
	i, wait := one.Next(0, 1)
	assert.Equal(t, 0, i)
	assert.True(t, wait, "a single endpoint waits before every attempt")
}

func TestShownCountsFromTheBase(t *testing.T) {
	l := New(list("own", "b", "c"), 2) // a leg whose own endpoint is the third of its standby's
	assert.Equal(t, 2, l.Shown(0))
	assert.Equal(t, 0, l.Shown(1))
	l.Use(2)
	ep, shown := l.InUse()
	assert.Equal(t, "c", ep.URL)
	assert.Equal(t, 1, shown)
	assert.False(t, l.OnPreferred())
}

func TestFindTheEndpointInUseInAReplacement(t *testing.T) {
	eps := list("a", "b")
	eps[1].Header = http.Header{"Authorization": {"Basic x"}}
	l := New(eps, 0)
	l.Use(1)

	i, ok := l.Find([]Endpoint{{URL: "c"}, {URL: "b", Header: http.Header{"Authorization": {"Basic x"}}}})
	require.True(t, ok)
	assert.Equal(t, 1, i, "the same URL with the same header")

	_, ok = l.Find([]Endpoint{{URL: "b", Header: http.Header{"Authorization": {"Basic y"}}}})
	assert.False(t, ok, "another header is another endpoint")

	l.Adopt(list("c", "d"), 1)
	all, current := l.All()
	assert.Equal(t, list("c", "d"), all)
	assert.Equal(t, 1, current)
	assert.Equal(t, 2, l.Len())
}

func TestSeriesOneForAnEndpointGivenTwice(t *testing.T) {
	l := New(list("a", "b", "a"), 0)
	l.Use(2)
	got := map[string]bool{}
	n := 0
	l.Series(func(shown string, inUse bool) { got[shown] = inUse; n++ })
	assert.Equal(t, 2, n)
	assert.Equal(t, map[string]bool{"a": true, "b": false}, got)
}

func TestProbationNeedsEveryProbeAnsweredForThePeriod(t *testing.T) {
	var p Probation
	t0 := time.Unix(1000, 0)
	after := 30 * time.Second
	assert.False(t, p.Answered(t0, true, after), "the period starts")
	assert.False(t, p.Answered(t0.Add(20*time.Second), true, after))
	assert.False(t, p.Answered(t0.Add(25*time.Second), false, after), "a probe not answered")
	assert.False(t, p.Answered(t0.Add(30*time.Second), true, after), "starts the period again")
	assert.False(t, p.Answered(t0.Add(55*time.Second), true, after))
	assert.True(t, p.Answered(t0.Add(60*time.Second), true, after), "30 s of answers")
	p.Reset()
	assert.False(t, p.Answered(t0.Add(65*time.Second), true, after), "reset: a new period")
}
