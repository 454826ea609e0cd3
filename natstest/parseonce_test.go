package natstest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/natsbridge"
	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// countingThalex is Thalex's dialect counting the topics it parses.
type countingThalex struct {
	protocol.Protocol
	mu     *sync.Mutex
	parsed map[string]int
}

func (d countingThalex) NewTopic(name string) (*protocol.Topic, error) {
	d.mu.Lock()
	d.parsed[name]++
	d.mu.Unlock()
	return d.Protocol.NewTopic(name)
}

// A member that leads takes a topic its own subscription handed over
// parsed (SubscribeTopics, as the sidecar's hub does) as it was parsed:
// one NewTopic a topic in the process, where the leader parsed it again.
// A topic it was asked for by name is still parsed by the leader.
func TestLeaderTakesItsMembersParsedTopics(t *testing.T) {
	ns := startNATS(t)
	ex := exchange(t)
	topics := startFeed(ex, 20*time.Millisecond)
	d := countingThalex{Protocol: thalex.Protocol(), mu: new(sync.Mutex), parsed: map[string]int{}}
	m := join(t, connect(t, ns.url()), "g1", "m0", ex, natsbridge.WithProtocol(d))
	ctx := context.Background()

	parsed, err := d.NewTopic(topics[0])
	require.NoError(t, err)
	streams, errs, err := m.SubscribeTopics(ctx, []*protocol.Topic{parsed})
	require.NoError(t, err)
	require.NoError(t, errs[0])
	named, err := m.Subscribe(ctx, topics[1])
	require.NoError(t, err)
	for _, c := range []<-chan client.Message{streams[0].C(), named.C()} {
		select {
		case _, ok := <-c:
			require.True(t, ok, "stream ended")
		case <-time.After(10 * time.Second):
			t.Fatal("no message within 10s")
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	assert.Equal(t, map[string]int{topics[0]: 1, topics[1]: 1}, d.parsed,
		"the handed-over topic parsed once, by its reader; the named one by the leader")
}
