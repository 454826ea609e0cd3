package natsbridge

import "github.com/wsfan/wsfan/pkg/client"

// position is where a consumer stands in one topic's stream: the epoch
// and sequence of the last message it accepted.
type position struct {
	epoch, seq uint64
	// cached says the position came from the last-value cache: the
	// messages between it and the first live one were published before
	// the consumer's live interest existed, so skipping them is joining
	// mid-stream, not a loss.
	cached bool
}

// verdict says what to do with a message.
type verdict uint8

const (
	accept    verdict = iota
	duplicate         // same leader, sequence already seen (the last value and the live copy)
	stale             // a former leader's message, after a newer leader's
)

// advance decides on the message (epoch, seq) and, when it is accepted,
// moves the position to it. step is how far the subscription's counter
// moves (more than 1 when messages were lost, so a consumer sees the gap
// in Message.Seq) and flags what the consumer must know: a new leader's
// first message is FlagReconnected (its upstream connection is new, so
// state built before may be stale), a jump in sequence is FlagGap
// unless the position is the cached last value.
func (p *position) advance(epoch, seq uint64) (v verdict, step uint64, flags client.Flags) {
	switch {
	case p.epoch == 0:
		step = 1
	case epoch < p.epoch:
		return stale, 0, 0
	case epoch > p.epoch:
		step, flags = 1, client.FlagReconnected
	case seq <= p.seq:
		return duplicate, 0, 0
	case p.cached:
		step = 1
	default:
		step = seq - p.seq
		if step > 1 {
			flags = client.FlagGap
		}
	}
	p.epoch, p.seq, p.cached = epoch, seq, false
	return accept, step, flags
}
