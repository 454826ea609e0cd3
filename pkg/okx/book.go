package okx

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/wsfan/wsfan/internal/jsonscan"
	"github.com/wsfan/wsfan/pkg/book"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// OKX's order books, as its order book channel's documentation describes
// them (https://www.okx.com/docs-v5/en/#order-book-trading-market-data-ws-order-book-channel):
//
//   - books, books-l2-tbt and books50-l2-tbt send the whole book first,
//     with action "snapshot" and prevSeqId -1, then changes with action
//     "update" (absolute sizes; 0 removes a level) whose prevSeqId is the
//     seqId of the message before. A change whose prevSeqId is not the
//     last seqId means messages were lost: the book is invalid at once
//     and resynced. seqId 0 is a real number ("the smallest possible
//     sequence ID value is 0"), never "no previous message"
//     (book.Update.Chained). OKX's two exceptions keep the chain rule: a
//     quiet book's empty update whose seqId equals its prevSeqId, and a
//     reset after maintenance, whose seqId is smaller than its prevSeqId
//     (which still names the last seqId, so the book follows it rather
//     than dropping it as stale).
//   - books5 and bbo-tbt send the whole book (5 levels, 1 level) in every
//     push.
//
// The payload (client.Message.Data) is the push's data array, of one
// item: asks and bids as [price, size, "0", orders] (the third field "is
// part of a deprecated feature and it is always 0"), ts, seqId,
// prevSeqId and checksum. The checksum is never checked: OKX fixed it to
// 0 ("Checksum (Deprecated) … its value is fixed to 0 and must no longer
// be used for integrity verification. Please use seqId/prevSeqId"), and
// a client that verifies it breaks on every update.
//
// OKX's changelog of February 2026 also announced that the initial
// snapshot would no longer be pushed (production "early August 2026"),
// a book then starting from the REST order book; its announcement of
// 21 May 2026 and its documentation as published in July 2026 keep the
// snapshot and fix only the checksum to 0, and this package follows
// them. Were the snapshot dropped, a book would never turn valid (its
// changes are ignored until a snapshot): it would say so, not lie.
type bookRules struct {
	channel, instID string
	chained         bool
}

// BookRules returns the rules of an OKX book topic (books:INST,
// books-l2-tbt:INST, books50-l2-tbt:INST, books5:INST, bbo-tbt:INST), or
// nil when topic is not one: what book.RulesFor finds for "okx".
func BookRules(topic string) book.Rules {
	a, err := parseTopic(topic)
	if err != nil || len(a.fields) != 1 || a.fields[0][0] != "instId" {
		return nil
	}
	if !chainedBooks[a.channel] && !wholeBooks[a.channel] {
		return nil
	}
	return &bookRules{channel: a.channel, instID: a.fields[0][1], chained: chainedBooks[a.channel]}
}

var errNoItem = errors.New("okx book: the data array holds no item")

func (r *bookRules) Parse(payload []byte, marked bool, u *book.Update) error {
	item, err := jsonscan.First(payload, 0)
	switch {
	case err != nil:
		return fmt.Errorf("okx book: data: %w", err)
	case item == nil:
		return errNoItem
	}
	var prev []byte
	seen := false
	m := jsonscan.Object(item, 0)
	for k, start, more := m.Next(); more; k, start, more = m.Next() {
		end := m.Skip()
		v := item[start:end]
		switch string(k) {
		case "asks":
			u.Asks, err = book.AppendLevels(u.Asks[:0], v, book.LevelLayout{})
		case "bids":
			u.Bids, err = book.AppendLevels(u.Bids[:0], v, book.LevelLayout{})
		case "seqId":
			var s int64
			s, err = seqValue(v, 0)
			u.Seq, seen = s, true
		case "prevSeqId":
			prev = v
		case "ts":
			if ns, ok := protocol.Millis(v); ok {
				u.Time = time.Unix(0, ns)
			}
		}
		if err != nil {
			return fmt.Errorf("okx book %s: %w", string(k), err)
		}
	}
	if err := m.Err(); err != nil {
		return fmt.Errorf("okx book: %w", err)
	}
	if !seen {
		return errors.New("okx book: no seqId")
	}
	if !r.chained {
		u.Snapshot = true // books5, bbo-tbt: every push is the whole book
		return nil
	}
	u.Snapshot = marked
	if prev == nil {
		return nil // names nothing before it: a change that cannot be checked
	}
	p, err := seqValue(prev, -1)
	if err != nil {
		return fmt.Errorf("okx book prevSeqId: %w", err)
	}
	if p == -1 {
		u.Snapshot = true // "in snapshot messages … the prevSeqId is always -1"
		return nil
	}
	if !u.Snapshot {
		u.Prev, u.Chained = p, true
	}
	return nil
}

// seqValue reads a sequence number no smaller than least.
func seqValue(v []byte, least int64) (int64, error) {
	n, ok := parseSeq(v)
	if !ok || n < least {
		return 0, fmt.Errorf("not a sequence number: %.20s", v)
	}
	return n, nil
}

// AppendSnapshot writes the data array of the whole-book push a new
// subscriber gets first (the server half's SnapshotEnvelope puts it in
// an action "snapshot" push): prevSeqId -1 and the last seqId, so the
// next update's prevSeqId follows it. pkg/book keeps a level's price and
// size only: its count of orders is written "0".
func (r *bookRules) AppendSnapshot(dst []byte, s *book.State) []byte {
	dst = append(dst, `[{"asks":`...)
	dst = appendLevels(dst, s.Asks)
	dst = append(dst, `,"bids":`...)
	dst = appendLevels(dst, s.Bids)
	if !r.chained {
		dst = append(dst, `,"instId":`...)
		dst = strconv.AppendQuote(dst, r.instID)
	}
	dst = append(dst, `,"ts":"`...)
	dst = strconv.AppendInt(dst, s.Time.UnixMilli(), 10)
	dst = append(dst, '"')
	if r.chained {
		dst = append(dst, `,"checksum":0,"prevSeqId":-1`...)
	}
	dst = append(dst, `,"seqId":`...)
	dst = strconv.AppendInt(dst, s.Seq, 10)
	return append(dst, "}]"...)
}

// appendLevels writes levels as OKX does: [price, size, "0", orders],
// all strings.
func appendLevels(dst []byte, levels []book.Level) []byte {
	dst = append(dst, '[')
	for i, l := range levels {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(l.Price.AppendTo(append(dst, `["`...)), `","`...)
		dst = append(l.Size.AppendTo(dst), `","0","0"]`...)
	}
	return append(dst, ']')
}
