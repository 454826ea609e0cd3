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
// is not one: what book.RulesFor finds for "thalex". A topic is a book
// when parseBookChannel accepts it, fractional groupings included.
func BookRules(topic string) book.Rules {
	if _, ok := parseBookChannel(topic); ok {
		return bookRules{}
	}
	return nil
}

// bookChannel is a book topic taken apart:
// book.<instrument>.<grouping>.<nlevels>.<delay>.
type bookChannel struct {
	Instrument string // e.g. BTC-PERPETUAL
	Grouping   string // "none", or a positive decimal such as 1 or 0.5
	Levels     string // "all", or a positive whole number
	Delay      string // "raw", or a whole number of milliseconds such as 100ms
}

// String is the channel's name, the inverse of parseBookChannel.
func (c bookChannel) String() string {
	return bookPrefix + c.Instrument + "." + c.Grouping + "." + c.Levels + "." + c.Delay
}

// bookPrefix starts every book channel's name.
const bookPrefix = "book."

// parseBookChannel takes a book topic apart, or reports false when topic
// is not one. The layout is the API specification's (thalex.com/docs, the
// "Thalex API Description", tag subs_market_data):
// book.<instrument>.<grouping>.<nlevels>.<delay>. Counting dots is not
// enough: the grouping is "a USD value aligned to [the] price tick size",
// or none, and with a tick below one dollar such a value may be 0.5 (the
// specification shows no example; this follows from its wording), giving
// a topic with five dots. The parse goes by structure instead:
//
//   - the instrument is the second part: Thalex's instrument names
//     (BTC-PERPETUAL, BTC-27JUN25-100000-C) hold no dot, so it ends at
//     the first dot after the prefix;
//   - the delay is the last part and nlevels the one before it;
//   - what lies between is the grouping: none, or a decimal with at most
//     one dot (0.5, 10, 2.5), digits on both sides of the dot.
//
// Each part is checked, so book.X.1.2 (too few parts), a grouping of
// neither form, or nlevels other than all or a count are refused. The
// delay is raw or <n>ms: the specification enumerates 100ms, 200ms, 500ms,
// 1000ms, 5000ms, 60000ms and raw; any whole number of milliseconds is
// taken, so that a delay Thalex adds later still makes a book.
func parseBookChannel(topic string) (bookChannel, bool) {
	rest, ok := strings.CutPrefix(topic, bookPrefix)
	if !ok {
		return bookChannel{}, false
	}
	var c bookChannel
	c.Instrument, rest, ok = strings.Cut(rest, ".")
	if !ok || c.Instrument == "" {
		return bookChannel{}, false
	}
	i := strings.LastIndexByte(rest, '.')
	if i < 0 {
		return bookChannel{}, false
	}
	rest, c.Delay = rest[:i], rest[i+1:]
	if i = strings.LastIndexByte(rest, '.'); i < 0 {
		return bookChannel{}, false
	}
	c.Grouping, c.Levels = rest[:i], rest[i+1:]
	if !validGrouping(c.Grouping) || !validLevels(c.Levels) || !validDelay(c.Delay) {
		return bookChannel{}, false
	}
	return c, true
}

// validGrouping: none, or a positive decimal of digits with at most one
// dot, a digit on either side of it (0.5, 10; not .5, 5., 1.2.3 or 0).
func validGrouping(g string) bool {
	if g == "none" {
		return true
	}
	whole, frac, dotted := strings.Cut(g, ".")
	if !digits(whole) || dotted && !digits(frac) {
		return false
	}
	return strings.Trim(whole+frac, "0") != "" // grouping by zero is no grouping
}

// validLevels: all, or a positive whole number.
func validLevels(n string) bool {
	return n == "all" || digits(n) && strings.Trim(n, "0") != ""
}

// validDelay: raw, or a positive whole number of milliseconds.
func validDelay(d string) bool {
	if d == "raw" {
		return true
	}
	ms, ok := strings.CutSuffix(d, "ms")
	return ok && digits(ms) && strings.Trim(ms, "0") != ""
}

// digits reports whether s is one or more ASCII digits.
func digits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
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
			ns, ok := seconds(v)
			if !ok {
				err = fmt.Errorf("%.30s is not seconds in range", v)
			}
			u.Time = time.Unix(0, ns)
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
	dst = book.NewDecimal(s.Time.UnixNano(), 9).AppendTo(append(dst, `,"time":`...))
	return append(dst, '}')
}

// total is the sum of the levels' amounts.
func total(levels []book.Level) book.Decimal {
	var sum book.Decimal
	for _, l := range levels {
		sum = sum.Add(l.Size)
	}
	return sum
}
