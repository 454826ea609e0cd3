package deribit

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/wsfan/wsfan/internal/jsonscan"
	"github.com/wsfan/wsfan/pkg/book"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// Deribit's books, as its API documentation describes the channels
// (docs.deribit.com, "Subscriptions": book.{instrument_name}.{interval}
// and book.{instrument_name}.{group}.{depth}.{interval}):
//
//   - book.{instrument_name}.{interval} (raw, 100ms, agg2) sends a
//     "type":"snapshot" first, then "type":"change" messages, each naming
//     the change_id of the one before it in prev_change_id. Levels are
//     [action, price, amount] with action "new", "change" or "delete"
//     (amount 0).
//     A change whose prev_change_id is null (seen in a third-party
//     recording; the documentation shows none) names no predecessor, as
//     Sequence reads it: it is applied without a chain to check, not
//     taken for a broken book.
//   - the grouped book.{instrument_name}.{group}.{depth}.{interval} sends
//     the whole book to depth every time: [price, amount] levels, a
//     change_id and no prev_change_id.
//
// The documentation says matching ids mean nothing was missed and is
// silent on what to do otherwise; wsfan resubscribes, which makes Deribit
// send a fresh snapshot.
var (
	rawLevels     = book.LevelLayout{Action: true}
	groupedLevels = book.LevelLayout{}
)

// bookRules are the book rules of one Deribit book topic.
type bookRules struct {
	instrument string
	grouped    bool // every message is the whole book
}

// BookRules returns the rules of a Deribit book topic, or nil when topic
// is not one: what book.RulesFor finds for "deribit".
func BookRules(topic string) book.Rules {
	parts := strings.Split(topic, ".")
	if parts[0] != "book" {
		return nil
	}
	switch len(parts) {
	case 3:
		return &bookRules{instrument: parts[1]}
	case 5:
		return &bookRules{instrument: parts[1], grouped: true}
	}
	return nil
}

func (r *bookRules) Parse(payload []byte, _ bool, u *book.Update) error {
	layout := rawLevels
	if r.grouped {
		layout, u.Snapshot = groupedLevels, true
	}
	m := jsonscan.Object(payload, 0)
	for {
		key, start, more := m.Next()
		if !more {
			break
		}
		end := m.Skip()
		v := payload[start:end]
		var err error
		switch string(key) {
		case "type":
			if !r.grouped {
				u.Snapshot = jsonscan.StringIs(v, "snapshot")
			}
		case "timestamp":
			ns, ok := protocol.Millis(v)
			if !ok {
				return fmt.Errorf("deribit book: timestamp %.20s", v)
			}
			u.Time = time.Unix(0, ns)
		case "change_id":
			u.Seq, err = sequence(v)
		case "prev_change_id":
			if string(v) != "null" { // a change with no predecessor: Prev stays 0
				u.Prev, err = sequence(v)
			}
		case "bids":
			u.Bids, err = book.AppendLevels(u.Bids, v, layout)
		case "asks":
			u.Asks, err = book.AppendLevels(u.Asks, v, layout)
		}
		if err != nil {
			return fmt.Errorf("deribit book %s: %w", string(key), err)
		}
	}
	if err := m.Err(); err != nil {
		return fmt.Errorf("deribit book: %w", err)
	}
	if u.Seq == 0 {
		return fmt.Errorf("deribit book: no change_id")
	}
	if u.Snapshot {
		u.Prev = 0
	}
	return nil
}

// sequence reads a change id.
func sequence(v []byte) (int64, error) {
	id, ok := jsonscan.Uint(v)
	if !ok || id > 1<<62 {
		return 0, fmt.Errorf("not a change id: %.20s", v)
	}
	return int64(id), nil
}

// AppendSnapshot writes what Deribit sends a new subscriber: the
// "snapshot" of the raw book with "new" levels, or the grouped book.
func (r *bookRules) AppendSnapshot(dst []byte, s *book.State) []byte {
	layout := rawLevels
	if r.grouped {
		layout = groupedLevels
		dst = append(dst, '{')
	} else {
		dst = append(dst, `{"type":"snapshot",`...)
	}
	dst = strconv.AppendInt(append(dst, `"timestamp":`...), s.Time.UnixMilli(), 10)
	dst = append(strconv.AppendQuote(append(dst, `,"instrument_name":`...), r.instrument), `,"change_id":`...)
	dst = strconv.AppendInt(dst, s.Seq, 10)
	dst = book.AppendLevelsJSON(append(dst, `,"bids":`...), s.Bids, layout, "new")
	dst = book.AppendLevelsJSON(append(dst, `,"asks":`...), s.Asks, layout, "new")
	return append(dst, '}')
}
