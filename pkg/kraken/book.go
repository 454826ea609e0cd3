package kraken

import (
	"errors"
	"fmt"
	"hash/crc32"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/wsfan/wsfan/internal/jsonscan"
	"github.com/wsfan/wsfan/pkg/book"
)

// Kraken's order books, as "Book checksum (WebSocket v2)"
// (https://docs.kraken.com/api/docs/guides/spot-ws-book-v2) and the book
// channel's page describe them:
//
//   - The first message after a subscribe is type "snapshot", then
//     "update"s whose levels set a price's qty (0 removes it); an update
//     may name a price several times, applied in order.
//   - After each message the book is truncated to the subscribed depth:
//     no qty 0 comes for a level pushed out of it (book.Truncating).
//   - Every message, snapshot or update, carries the CRC32 (IEEE, as an
//     unsigned 32-bit integer) of the ten best asks, low to high, then
//     the ten best bids, high to low, each price and qty written with the
//     "." and then the leading zeros removed, concatenated, whatever the
//     subscribed depth. The book is verified on every message
//     (book.Verifying): a mismatch breaks it at once and a resync's
//     snapshot is awaited.
//   - Prices and quantities are JSON numbers "pushed onto the wire
//     containing full precision": the text's digits, trailing zeros
//     included, are what the checksum covers. The book holds exact
//     decimals (book.Decimal) and writes them back at the pair's
//     precision: the most fractional digits the book's texts have shown
//     since its snapshot, which for a feed that writes every number at
//     full precision is the instrument's price_precision and
//     qty_precision.
type bookRules struct {
	symbol string
	depth  int

	// Written by Parse on the applying goroutine, read by
	// AppendSnapshot's readers: the precision the texts have shown.
	pricePrec, qtyPrec atomic.Int32

	buf []byte // the checksum's text; owned by the applying goroutine
}

// BookRules returns the rules of a Kraken book topic (book:SYMBOL or
// book:SYMBOL:DEPTH), or nil when topic is not one: what book.RulesFor
// finds for "kraken".
func BookRules(topic string) book.Rules {
	t, err := parseTopic(topic)
	if err != nil || t.channel != "book" {
		return nil
	}
	return &bookRules{symbol: t.symbol, depth: t.depth()}
}

// Depth implements book.Truncating: the subscribed depth.
func (r *bookRules) Depth() int { return r.depth }

var errNoItem = errors.New("kraken book: the data array holds no item")

// Parse reads a book message's data array, its first item: bids, asks,
// checksum and timestamp (RFC 3339, the message's exchange time).
func (r *bookRules) Parse(payload []byte, marked bool, u *book.Update) error {
	item, err := jsonscan.First(payload, 0)
	switch {
	case err != nil:
		return fmt.Errorf("kraken book: data: %w", err)
	case item == nil:
		return errNoItem
	}
	u.Snapshot = marked
	if marked {
		r.pricePrec.Store(0)
		r.qtyPrec.Store(0)
	}
	seen := false
	m := jsonscan.Object(item, 0)
	for k, start, more := m.Next(); more; k, start, more = m.Next() {
		end := m.Skip()
		v := item[start:end]
		switch string(k) {
		case "bids":
			u.Bids, err = r.appendLevels(u.Bids[:0], v)
		case "asks":
			u.Asks, err = r.appendLevels(u.Asks[:0], v)
		case "checksum":
			n, ok := jsonscan.Uint(v)
			if !ok || n > 1<<32-1 {
				err = fmt.Errorf("not a CRC32: %.20s", v)
			}
			u.Checksum, seen = n, true
		case "timestamp":
			if len(v) > 0 && v[0] == '"' { // the reader Classify uses (stamp.go)
				if ns, ok := rfc3339(v); ok {
					u.Time = time.Unix(0, ns).UTC()
				} else {
					err = fmt.Errorf("not an RFC 3339 time: %.40s", v)
				}
			}
		}
		if err != nil {
			return fmt.Errorf("kraken book %s: %w", string(k), err)
		}
	}
	if err := m.Err(); err != nil {
		return fmt.Errorf("kraken book: %w", err)
	}
	if !seen {
		return errors.New("kraken book: no checksum")
	}
	return nil
}

// appendLevels reads levels [{"price":P,"qty":Q},…], noting the most
// fractional digits their texts show.
func (r *bookRules) appendLevels(dst []book.Level, levels []byte) ([]book.Level, error) {
	var err error
	e := jsonscan.Elements(levels, 0, func(raw []byte) bool {
		var l book.Level
		var price, qty []byte
		m := jsonscan.Object(raw, 0)
		for k, start, more := m.Next(); more; k, start, more = m.Next() {
			end := m.Skip()
			switch string(k) {
			case "price":
				price = raw[start:end]
			case "qty":
				qty = raw[start:end]
			}
		}
		if m.Err() != nil || price == nil || qty == nil {
			err = fmt.Errorf("a level is not {price, qty}: %.40s", raw)
			return false
		}
		if l.Price, err = readNumber(price, &r.pricePrec); err != nil {
			return false
		}
		if l.Size, err = readNumber(qty, &r.qtyPrec); err != nil {
			return false
		}
		dst = append(dst, l)
		return true
	})
	if err == nil {
		err = e
	}
	return dst, err
}

// readNumber reads a JSON number's text exactly and raises prec to its
// count of fractional digits. An exponent is refused: its digits are not
// the text the checksum covers.
func readNumber(raw []byte, prec *atomic.Int32) (book.Decimal, error) {
	frac := -1
	for i, c := range raw {
		switch c {
		case '.':
			frac = len(raw) - i - 1
		case 'e', 'E', '"':
			return book.Decimal{}, fmt.Errorf("not a plain decimal number: %.30s", raw)
		}
	}
	d, err := book.ParseDecimal(raw)
	if err != nil {
		return d, err
	}
	if int32(frac) > prec.Load() {
		prec.Store(int32(frac))
	}
	return d, nil
}

// Verify implements book.Verifying: the checksum of the ten best levels
// a side, written at the pair's precision, is the message's.
func (r *bookRules) Verify(u *book.Update, bids, asks []book.Level) error {
	sum, err := r.checksum(bids, asks)
	if err != nil {
		return err
	}
	if uint64(sum) != u.Checksum {
		return fmt.Errorf("checksum %d, the book's %d", u.Checksum, sum)
	}
	return nil
}

// checksum is the CRC32 of the book's ten best levels a side.
func (r *bookRules) checksum(bids, asks []book.Level) (uint32, error) {
	pp, qp := int(r.pricePrec.Load()), int(r.qtyPrec.Load())
	r.buf = r.buf[:0]
	var err error
	for _, side := range [2][]book.Level{asks, bids} {
		for _, l := range side[:min(len(side), checksumLevels)] {
			if r.buf, err = appendChecksumDigits(r.buf, l.Price, pp); err != nil {
				return 0, err
			}
			if r.buf, err = appendChecksumDigits(r.buf, l.Size, qp); err != nil {
				return 0, err
			}
		}
	}
	return crc32.ChecksumIEEE(r.buf), nil
}

// checksumLevels is how many levels a side the checksum covers.
const checksumLevels = 10

// appendChecksumDigits appends d written with prec fractional digits,
// its "." and then its leading zeros removed ("45285.2" → "452852",
// "0.00100000" → "100000").
func appendChecksumDigits(dst []byte, d book.Decimal, prec int) ([]byte, error) {
	start := len(dst)
	dst = appendFixed(dst, d, prec)
	if len(dst) == start {
		return dst, fmt.Errorf("%s has more than %d fractional digits", d, prec)
	}
	digits := dst[start:]
	n := 0
	for n < len(digits)-1 && (digits[n] == '0' || digits[n] == '.') {
		n++
	}
	out := dst[:start]
	for _, c := range digits[n:] {
		if c != '.' {
			out = append(out, c)
		}
	}
	return out, nil
}

// appendFixed appends d with exactly prec fractional digits (trailing
// zeros kept), or nothing when d has more.
func appendFixed(dst []byte, d book.Decimal, prec int) []byte {
	start := len(dst)
	dst = d.AppendTo(dst)
	text := dst[start:]
	frac := 0
	for i, c := range text {
		if c == '.' {
			frac = len(text) - i - 1
		}
	}
	if frac > prec {
		return dst[:start]
	}
	if frac == 0 && prec > 0 {
		dst = append(dst, '.')
	}
	for ; frac < prec; frac++ {
		dst = append(dst, '0')
	}
	return dst
}

// AppendSnapshot writes the data array of the snapshot a new subscriber
// gets first (the server half's SnapshotEnvelope marks it): the levels at
// the pair's precision and their checksum.
func (r *bookRules) AppendSnapshot(dst []byte, s *book.State) []byte {
	pp, qp := int(r.pricePrec.Load()), int(r.qtyPrec.Load())
	dst = append(dst, `[{"symbol":`...)
	dst = strconv.AppendQuote(dst, r.symbol)
	dst = appendLevelObjects(append(dst, `,"bids":`...), s.Bids, pp, qp)
	dst = appendLevelObjects(append(dst, `,"asks":`...), s.Asks, pp, qp)
	scratch := bookRules{}
	scratch.pricePrec.Store(int32(pp))
	scratch.qtyPrec.Store(int32(qp))
	sum, _ := scratch.checksum(s.Bids, s.Asks)
	dst = strconv.AppendUint(append(dst, `,"checksum":`...), uint64(sum), 10)
	dst = append(dst, `,"timestamp":"`...)
	dst = append(append(dst, stamp(s.Time)...), `"}]`...)
	return dst
}

// appendLevelObjects writes levels as Kraken does: [{"price":P,"qty":Q}],
// numbers at the pair's precision.
func appendLevelObjects(dst []byte, levels []book.Level, pp, qp int) []byte {
	dst = append(dst, '[')
	for i, l := range levels {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendFixed(append(dst, `{"price":`...), l.Price, pp)
		dst = appendFixed(append(dst, `,"qty":`...), l.Size, qp)
		dst = append(dst, '}')
	}
	return append(dst, ']')
}

var (
	_ book.Verifying  = (*bookRules)(nil)
	_ book.Truncating = (*bookRules)(nil)
)
