package natsbridge

import (
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"

	"github.com/wsfan/wsfan/pkg/client"
)

// parseMeta reads what the leader writes, and refuses what is missing or
// malformed.
func TestParseMeta(t *testing.T) {
	h := func(kv ...string) nats.Header {
		out := nats.Header{}
		for i := 0; i < len(kv); i += 2 {
			out[kv[i]] = []string{kv[i+1]}
		}
		return out
	}
	for _, c := range []struct {
		name string
		h    nats.Header
		want meta
		ok   bool
	}{
		{"live", h(HeaderEpoch, "7", HeaderSeq, "42"), meta{epoch: 7, seq: 42}, true},
		{"flags and topic", h(HeaderEpoch, "7", HeaderSeq, "1", HeaderFlags, "3", HeaderTopic, "a.b"),
			meta{epoch: 7, seq: 1, flags: client.Flags(3), topic: "a.b"}, true},
		{"refusal needs no seq", h(HeaderEpoch, "9", HeaderError, "refused"), meta{epoch: 9, refusal: "refused"}, true},
		{"other headers ignored", h(HeaderEpoch, "7", HeaderSeq, "2", "X-Other", "x"), meta{epoch: 7, seq: 2}, true},
		{"no epoch", h(HeaderSeq, "1"), meta{}, false},
		{"zero epoch", h(HeaderEpoch, "0", HeaderSeq, "1"), meta{}, false},
		{"no seq", h(HeaderEpoch, "7"), meta{epoch: 7}, false},
		{"bad seq", h(HeaderEpoch, "7", HeaderSeq, "x"), meta{epoch: 7}, false},
		{"bad flags", h(HeaderEpoch, "7", HeaderSeq, "1", HeaderFlags, "999"), meta{epoch: 7, seq: 1}, false},
		{"empty value list", nats.Header{HeaderEpoch: nil, HeaderSeq: {"1"}}, meta{}, false},
		{"stamps", h(HeaderEpoch, "7", HeaderSeq, "3", HeaderVenueNs, "1737043200123000000", HeaderRecvNs, "1737043200173000000"),
			meta{epoch: 7, seq: 3, venue: 1737043200123000000, recv: 1737043200173000000}, true},
		{"a malformed stamp read as none", h(HeaderEpoch, "7", HeaderSeq, "3", HeaderVenueNs, "x", HeaderRecvNs, "1"),
			meta{epoch: 7, seq: 3, recv: 1}, true},
	} {
		got, ok := parseMeta(c.h)
		assert.Equal(t, c.ok, ok, c.name)
		if c.ok {
			assert.Equal(t, c.want, got, c.name)
		}
	}
}
