package relay

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/pkg/client"
)

// events returns a closed channel holding an event of each kind, in order.
func events(kinds ...client.EventKind) <-chan client.Event {
	ch := make(chan client.Event, len(kinds))
	for _, k := range kinds {
		ch <- client.Event{Kind: k}
	}
	close(ch)
	return ch
}

// drain reads what r's channel holds now, without waiting.
func drain(r *Relay) []client.Event {
	var got []client.Event
	for {
		select {
		case ev := <-r.C():
			got = append(got, ev)
		default:
			return got
		}
	}
}

func TestRelayMarksEachEventWithItsConnectionAndSeesItFirst(t *testing.T) {
	r := New(8)
	var seen []client.Event
	r.Relay(events(client.Connected, client.Disconnected), 3, func(ev client.Event) {
		assert.Len(t, r.C(), len(seen), "seen is called before the event is relayed")
		seen = append(seen, ev)
	})
	// Relay returned: its source was closed.
	want := []client.Event{{Kind: client.Connected, Connection: 3}, {Kind: client.Disconnected, Connection: 3}}
	assert.Equal(t, want, seen)
	r.Relay(events(client.Connected), 5, nil)
	assert.Equal(t, append(want, client.Event{Kind: client.Connected, Connection: 5}), drain(r))
}

func TestRelayDropsTheOldestWhenFull(t *testing.T) {
	r := New(2)
	r.Relay(events(client.Resubscribed, client.Connected, client.Disconnected, client.Reconnecting), 0, nil)
	assert.Equal(t, []client.Event{{Kind: client.Disconnected}, {Kind: client.Reconnecting}}, drain(r),
		"a full channel keeps the newest events")

	zero := New(0)
	zero.Relay(events(client.Resubscribed, client.Connected), 0, nil)
	assert.Equal(t, []client.Event{{Kind: client.Connected}}, drain(zero), "a buffer below 1 holds one event")
}

func TestRelayAfterCloseDropsAndCloseIsIdempotent(t *testing.T) {
	r := New(4)
	r.Relay(events(client.Connected), 0, nil)
	r.Close()
	r.Close()
	r.Relay(events(client.Disconnected), 1, nil) // must neither panic nor block
	ev, ok := <-r.C()
	require.True(t, ok)
	assert.Equal(t, client.Connected, ev.Kind, "what was queued before Close is still read")
	_, ok = <-r.C()
	assert.False(t, ok, "the channel is closed, and nothing relayed after Close reached it")
}

// Several connections relaying into one small channel at once, while it
// is closed: every send is serialized with Close (run with -race), none
// blocks, and every event read is one that was sent.
func TestRelayConcurrentConnectionsAndClose(t *testing.T) {
	r := New(4)
	const conns, each = 4, 500
	var wg sync.WaitGroup
	for i := range conns {
		ch := make(chan client.Event)
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.Relay(ch, i, nil)
		}()
		go func() {
			defer close(ch)
			for range each {
				ch <- client.Event{Kind: client.Gap, Connection: -1}
			}
		}()
	}
	go func() {
		wg.Wait()
		r.Close() // when every relay is done before the reader closes it
	}()
	read := 0
	for ev := range r.C() {
		require.Equal(t, client.Gap, ev.Kind)
		require.True(t, ev.Connection >= 0 && ev.Connection < conns, "marked with its connection: %d", ev.Connection)
		if read++; read == 100 {
			r.Close()
		}
	}
	wg.Wait()
	assert.Positive(t, read)
	assert.LessOrEqual(t, read, conns*each)
}
