package thalex

import (
	"fmt"
	"strings"
	"time"

	"github.com/wsfan/wsfan/internal/jsonscan"
	"github.com/wsfan/wsfan/pkg/book"
)

// Thalex's books, as its API specification describes the channel
// book.<instrument>.<grouping>.<nlevels>.<delay> (thalex.com/docs, the
// OpenAPI "Thalex API Description", notification schema of the book
// channel): the notification carries bid_changes and ask_changes, levels
// [price, amount, outright amount] with amount 0 for a level now empty,
// the trades since the last one, total_bid_amount, total_ask_amount and
// time (Unix seconds, fractional). The first notification of a
// subscription carries the whole book and the envelope's top-level
// "snapshot": true ("present only if true, and only for stateful feeds
// that transmit an initial state and subsequent updates"); the client
// flags it FlagSnapshot. Thalex numbers no message, so there is no chain
// to check: a book is kept right by the snapshot and the connection's
// order.
var thalexLevels = book.LevelLayout{Aux: true}

// bookRules are the book rules of a Thalex book topic.
type bookRules struct{}

// BookRules returns the rules of a Thalex book topic, or nil when topic
// is not one: what book.RulesFor finds for "thalex".
func BookRules(topic string) book.Rules {
	if strings.HasPrefix(topic, "book.") && strings.Count(topic, ".") == 4 {
		return bookRules{}
	}
	return nil
}

func (bookRules) Parse(payload []byte, marked bool, u *book.Update) error {
	u.Snapshot = marked
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
		case "bid_changes":
			u.Bids, err = book.AppendLevels(u.Bids, v, thalexLevels)
		case "ask_changes":
			u.Asks, err = book.AppendLevels(u.Asks, v, thalexLevels)
		case "time":
			var secs book.Decimal
			secs, err = book.ParseDecimal(v)
			// A Decimal counts 10^-8 units: 10 ns each.
			u.Time = time.Unix(0, int64(secs)*10)
		}
		if err != nil {
			return fmt.Errorf("thalex book %s: %w", string(key), err)
		}
	}
	if err := m.Err(); err != nil {
		return fmt.Errorf("thalex book: %w", err)
	}
	return nil
}

// AppendSnapshot writes the notification of a first book message: every
// level as a change, no trades, the totals of the levels held.
func (bookRules) AppendSnapshot(dst []byte, s *book.State) []byte {
	dst = book.AppendLevelsJSON(append(dst, `{"trades":[],"bid_changes":`...), s.Bids, thalexLevels, "")
	dst = book.AppendLevelsJSON(append(dst, `,"ask_changes":`...), s.Asks, thalexLevels, "")
	dst = total(s.Bids).AppendTo(append(dst, `,"total_bid_amount":`...))
	dst = total(s.Asks).AppendTo(append(dst, `,"total_ask_amount":`...))
	dst = book.Decimal(s.Time.UnixNano() / 10).AppendTo(append(dst, `,"time":`...))
	return append(dst, '}')
}

// total is the sum of the levels' amounts.
func total(levels []book.Level) book.Decimal {
	var sum book.Decimal
	for _, l := range levels {
		sum += l.Size
	}
	return sum
}
