package natsbridge

import (
	"strconv"

	"github.com/nats-io/nats.go"

	"github.com/wsfan/wsfan/pkg/client"
)

// Headers of the messages the leader publishes on a group's subjects.
// Every message on wsfan.<group>.t.<topic> and wsfan.<group>.lvc.<topic>
// carries HeaderSeq and HeaderEpoch; the others appear when they apply.
const (
	// HeaderSeq is the message's position in its topic's stream under the
	// current leader, from 1, in decimal. A jump is a gap.
	HeaderSeq = "Wsfan-Seq"
	// HeaderEpoch is the publishing leader's epoch, in decimal: the
	// revision of the lease it won. A higher epoch is a new leader; a
	// lower one is a stale leader whose messages are ignored.
	HeaderEpoch = "Wsfan-Epoch"
	// HeaderFlags carries the upstream's client.Flags (reconnected, gap)
	// in decimal, when not zero.
	HeaderFlags = "Wsfan-Flags"
	// HeaderTopic carries the topic when its subject is hashed.
	HeaderTopic = "Wsfan-Topic"
	// HeaderError marks a message that carries no data but the reason the
	// upstream refused the topic (on the live subject), or a failed call
	// (on an RPC reply: rpc, policy, lost, timeout or failed).
	HeaderError = "Wsfan-Error"
	// HeaderMethod carries the method of a call forwarded to the leader.
	HeaderMethod = "Wsfan-Method"
	// HeaderVenueNs carries the venue's stamp of a live message, Unix
	// nanoseconds in decimal, when the leader's upstream read one
	// (client.WithStamps: Message.ExchangeTime); a member's local clients
	// get it as their Message.ExchangeTime.
	HeaderVenueNs = "Wsfan-Venue-Ns"
	// HeaderRecvNs carries when the leader read a live message from its
	// upstream (Message.RecvTime; an upstream sidecar's receive time when
	// the leader is behind one), Unix nanoseconds in decimal; a member's
	// local clients get it as their Message.UpstreamRecvTime.
	HeaderRecvNs = "Wsfan-Recv-Ns"
)

// meta is what a consumer reads from a data message's headers.
type meta struct {
	seq, epoch uint64
	flags      client.Flags
	topic      string // HeaderTopic, when present
	refusal    string // HeaderError, when present
	venue      int64  // HeaderVenueNs; 0 when absent or malformed
	recv       int64  // HeaderRecvNs; 0 when absent or malformed
}

// parseMeta reads the headers of a message on a live or LVC subject. It
// reports false when they are missing or malformed.
func parseMeta(h nats.Header) (meta, bool) {
	var md meta
	var err error
	if md.epoch, err = strconv.ParseUint(first(h, HeaderEpoch), 10, 64); err != nil || md.epoch == 0 {
		return md, false
	}
	md.topic = first(h, HeaderTopic)
	if md.refusal = first(h, HeaderError); md.refusal != "" {
		return md, true
	}
	if md.seq, err = strconv.ParseUint(first(h, HeaderSeq), 10, 64); err != nil || md.seq == 0 {
		return md, false
	}
	if f := first(h, HeaderFlags); f != "" {
		v, err := strconv.ParseUint(f, 10, 8)
		if err != nil {
			return md, false
		}
		md.flags = client.Flags(v)
	}
	// The stamps inform; a message without them (an older leader's) or
	// with a malformed one is delivered all the same.
	md.venue, _ = strconv.ParseInt(first(h, HeaderVenueNs), 10, 64)
	md.recv, _ = strconv.ParseInt(first(h, HeaderRecvNs), 10, 64)
	return md, true
}

// first returns the first value of key; nats.Header keys are case
// sensitive and the leader writes them exactly as declared.
func first(h nats.Header, key string) string {
	if v := h[key]; len(v) > 0 {
		return v[0]
	}
	return ""
}
