package standby

import (
	"sync/atomic"

	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// A merged stream never goes backwards. Where a topic's messages carry
// their place in it (a book's change id: Deribit change_id, OKX seqId,
// Ethereal t; a chain head's block number), the merge remembers the
// place of the last message it delivered and drops any later arrival
// placed before it, whichever leg sent it and however often: a leg back
// from a hole whose fresh snapshot is older than the changes another leg
// already delivered would otherwise roll every program's book back, and
// the next change would not follow it. Identity counts (standbymerge.go)
// cannot tell: a leg that saw a change before its hole and then gets a
// snapshot at that same change has sent the identity twice.
//
// A change is behind when it is placed at or before the last delivered
// message (a sequence has one change a place); a head when it is placed
// before it, unless the leg flagged it a reorg, which goes back on
// purpose. A snapshot is behind when it is placed before the last
// delivered message while another leg is up and has reached that place
// (that leg carries the stream from there); with no such leg the
// snapshot is delivered, whole state that keeps a book whole: the venue
// restarted its sequence (OKX may), and a stream that waited for the old
// place would never move again. Topics without a place keep the
// identity merge alone.

// placing is how a topic's messages are placed.
type placing uint8

const (
	placeSequence placing = iota + 1 // protocol.Protocol.Sequence: a book's change id
	placeHeight                      // protocol.Recoverer.Position of a chain's heads
)

// topicPlace is a merge's record of one placed topic. Owned by the
// merge, under its mu.
type topicPlace struct {
	how         placing
	topic       *protocol.Topic
	backfilling protocol.Recoverer // placeHeight's reader of a head's position
	delivered   uint64             // the place of the last placed message delivered
	any         bool               // one was
	// leg[i] is the place of leg i's last placed message, plus one (0:
	// none yet), written by leg i's reader (a dropped copy's too,
	// copies.go) and read under the merge's mu.
	leg [Max + 1]atomic.Uint64
}

// placed is a message's place, read once on offer.
type placed struct {
	at       *topicPlace // nil: the message has no place
	pos      uint64
	snapshot bool
	reorg    bool
}

// newPlaces returns the places of the merge of topics on dialect p: one
// for each topic whose messages are placed, nil when none is.
func newPlaces(p protocol.Protocol, topics []*protocol.Topic) map[string]*topicPlace {
	backfilling := p.Venue().Recoverer
	var places map[string]*topicPlace
	for _, t := range topics {
		var how placing
		switch {
		case t.Sequenced:
			how = placeSequence
		case t.Backfill && !t.Retracts && backfilling != nil: // heads: a log goes back when retracted
			how = placeHeight
		default:
			continue
		}
		if places == nil {
			places = make(map[string]*topicPlace, len(topics))
		}
		places[t.Name] = &topicPlace{how: how, topic: t, backfilling: backfilling}
	}
	return places
}

// placeOf reads msg's place, unless its client read it (read: not 0),
// and records it as leg's last. Called with m.mu held.
func (m *merge) placeOf(leg int, msg client.Message, read uint64) placed {
	pl := m.places[msg.Topic]
	if pl == nil {
		return placed{}
	}
	pos, ok := read, read != 0
	switch {
	case ok:
	case pl.how == placeSequence:
		pos, _, ok = m.sb.proto.Sequence(msg.Data)
	case pl.how == placeHeight:
		pos, ok = pl.backfilling.Position(pl.topic, msg.Data)
	}
	if !ok {
		return placed{}
	}
	pl.reached(leg, pos)
	return placed{at: pl, pos: pos, snapshot: msg.Flags&client.FlagSnapshot != 0, reorg: msg.Flags&client.FlagReorg != 0}
}

// behind reports whether a message of leg placed at p would take the
// merged stream back (see above). Called with m.mu held.
func (m *merge) behind(leg int, p placed) bool {
	pl := p.at
	if pl == nil || !pl.any {
		return false
	}
	switch {
	case pl.how == placeHeight:
		return p.pos < pl.delivered && !p.reorg
	case !p.snapshot:
		return p.pos <= pl.delivered
	case p.pos >= pl.delivered:
		return false
	}
	for j := range m.alive {
		if j != leg && m.alive[j] && m.sb.health[j].upSince.Load() != 0 && pl.leg[j].Load() > pl.delivered {
			return true
		}
	}
	return false
}

// reached records pos as the place of leg's last placed message. Runs on
// leg's reader.
func (pl *topicPlace) reached(leg int, pos uint64) { pl.leg[leg].Store(pos + 1) }

// delivered records that a message placed at p was delivered. Called
// with m.mu held.
func (p placed) delivered() {
	if p.at != nil {
		p.at.delivered, p.at.any = p.pos, true
	}
}
