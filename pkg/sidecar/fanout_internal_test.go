package sidecar

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/wsfan/wsfan/pkg/client"
)

// A message offered while caught up is written to idle clients from the
// offering goroutine; once another message waits behind it, the rest of
// its offers are queued for the clients' writers, so that the next
// message does not wait for every write.
func TestOffersQueuedOnceAMessageWaitsBehind(t *testing.T) {
	for _, waiting := range []bool{false, true} {
		var st stats
		behind := make(chan client.Message, 1)
		if waiting {
			behind <- client.Message{}
		}
		tp := &topic{behind: behind}
		var subs []*session
		var trs []*testTransport
		for range 2 * minOfferChunk {
			s, tr := newTestSession(testConfig(t, nil), &st, nil, kindWS)
			subs, trs = append(subs, s), append(trs, tr)
		}
		var frames topicFrames
		frames.message[subs[0].enc.id] = []byte("m")
		tp.offerAll(subs, &frames, true)
		for i, s := range subs {
			queued, _ := s.queued()
			if waiting {
				assert.Equal(t, 1, queued, "client %d: queued for its writer", i)
				assert.Empty(t, trs[i].wrote, "client %d", i)
			} else {
				assert.Zero(t, queued, "client %d: written at once", i)
				assert.Equal(t, "m", string(trs[i].wrote), "client %d", i)
			}
		}
	}
}
