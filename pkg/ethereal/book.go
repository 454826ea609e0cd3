package ethereal

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/wsfan/wsfan/internal/jsonscan"
	"github.com/wsfan/wsfan/pkg/book"
)

// Ethereal's L2Book, as its WebSocket documentation describes it
// (https://docs.ethereal.trade/developer-guides/trading-api/websockets,
// L2Book): the first message after a subscribe is the whole book (up to
// 100 levels a side), marked by nothing but its position, which the
// client flags FlagSnapshot; later messages carry the levels changed,
// with absolute quantities (0 removes the level). data.t is the message's
// time in milliseconds and data.pt, which is optional, the t of the
// message before it: a pt that is not the last t means messages were
// missed. A later message without pt is a diff all the same, checked
// against nothing here (Update.Prev 0); it is never a whole book unless
// the client marked it one (see Protocol's Sequence). Prices and quantities are decimal strings,
// levels [price, quantity] under data.b (bids) and data.a (asks). The
// client's Message.Data is the whole frame: {"e":"L2Book","t":…,"data":{…}}.
var etherealLevels = book.LevelLayout{}

// bookRules are the book rules of one L2Book topic.
type bookRules struct{ symbol string }

// BookRules returns the rules of an Ethereal L2Book topic
// (L2Book:SYMBOL), or nil when topic is not one: what book.RulesFor finds
// for "ethereal".
func BookRules(topic string) book.Rules {
	typ, symbol, ok := strings.Cut(topic, ":")
	if !ok || typ != "L2Book" || symbol == "" {
		return nil
	}
	return &bookRules{symbol: symbol}
}

func (*bookRules) Parse(frame []byte, marked bool, u *book.Update) error {
	u.Snapshot = marked
	m := jsonscan.Object(frame, 0)
	for {
		key, start, more := m.Next()
		if !more {
			break
		}
		if string(key) != "data" {
			m.Skip()
			continue
		}
		end := m.Skip()
		if err := parseL2Data(frame[start:end], u); err != nil {
			return err
		}
	}
	if err := m.Err(); err != nil {
		return fmt.Errorf("ethereal L2Book: %w", err)
	}
	if u.Seq == 0 {
		return fmt.Errorf("ethereal L2Book: no data.t")
	}
	if u.Snapshot {
		u.Prev = 0
	}
	return nil
}

// parseL2Data reads an L2Book's data object.
func parseL2Data(data []byte, u *book.Update) error {
	m := jsonscan.Object(data, 0)
	for {
		key, start, more := m.Next()
		if !more {
			break
		}
		end := m.Skip()
		v := data[start:end]
		var err error
		switch string(key) {
		case "t":
			t, ok := jsonscan.Uint(v)
			if !ok || t > 1<<62 {
				return fmt.Errorf("ethereal L2Book: data.t %.20s", v)
			}
			u.Seq, u.Time = int64(t), time.UnixMilli(int64(t))
		case "pt":
			pt, ok := jsonscan.Uint(v)
			if !ok || pt > 1<<62 {
				return fmt.Errorf("ethereal L2Book: data.pt %.20s", v)
			}
			u.Prev = int64(pt)
		case "b":
			u.Bids, err = book.AppendLevels(u.Bids, v, etherealLevels)
		case "a":
			u.Asks, err = book.AppendLevels(u.Asks, v, etherealLevels)
		}
		if err != nil {
			return fmt.Errorf("ethereal L2Book data.%s: %w", string(key), err)
		}
	}
	if err := m.Err(); err != nil {
		return fmt.Errorf("ethereal L2Book data: %w", err)
	}
	return nil
}

// AppendSnapshot writes the whole-book message a new subscriber gets
// first: the held levels at the last message's t, whose pt it keeps
// unknown (0 is never a real t), so the next message's pt follows it.
func (r *bookRules) AppendSnapshot(dst []byte, s *book.State) []byte {
	t := strconv.FormatInt(s.Seq, 10)
	dst = append(append(append(dst, `{"e":"L2Book","t":`...), t...), `,"data":{"s":`...)
	dst = append(strconv.AppendQuote(dst, r.symbol), `,"t":`...)
	dst = append(append(dst, t...), `,"pt":0,"a":`...)
	dst = book.AppendLevelsQuoted(dst, s.Asks)
	dst = book.AppendLevelsQuoted(append(dst, `,"b":`...), s.Bids)
	return append(dst, "}}"...)
}
