package kraken

import "time"

// Kraken stamps a message in RFC 3339, UTC with microseconds
// ("2023-10-06T17:35:55.440295Z"): a book's, a trade's and an order
// event's in the first item of its data, an ohlc message in a
// "timestamp" of its own beside its data (its item's is the candle's
// end, ahead of the message). Classify picks both up in the scan it
// already makes of the frame and of the first item (it routes by the
// item's symbol), so reading the stamp walks nothing more; the book
// rules read their item's with the same reader.

// venueTime is a message's stamp in Unix nanoseconds: its own (top),
// else its first item's (item); 0 when the one it has does not read.
func venueTime(top, item []byte) int64 {
	if top == nil {
		top = item
	}
	ns, _ := rfc3339(top)
	return ns
}

// rfc3339 reads a JSON string holding an RFC 3339 time, as
// time.Parse(time.RFC3339Nano) reads it (upper-case T and Z, up to nine
// digits of fraction, or an offset ±hh:mm), as Unix nanoseconds; ok is
// false for anything else (an escape, a leap second, a date that does
// not exist) and for a time before 1970 or a year past 2261 (nanoseconds
// fit an int64). It allocates nothing.
func rfc3339(v []byte) (ns int64, ok bool) {
	if len(v) < 22 || v[0] != '"' || v[len(v)-1] != '"' {
		return 0, false
	}
	s := v[1 : len(v)-1]
	num := func(i, n int) int { // the n digits at i, or -1
		x := 0
		for _, c := range s[i : i+n] {
			if c < '0' || c > '9' {
				return -1
			}
			x = x*10 + int(c-'0')
		}
		return x
	}
	if s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' {
		return 0, false
	}
	year, month, day := num(0, 4), num(5, 2), num(8, 2)
	hour, minute, sec := num(11, 2), num(14, 2), num(17, 2)
	if year < 1970 || year > 2261 || month < 1 || month > 12 || day < 1 || hour < 0 || hour > 23 || minute < 0 || minute > 59 || sec < 0 || sec > 59 {
		return 0, false
	}
	i, frac := 19, 0
	if i < len(s) && s[i] == '.' {
		i++
		digits := 0
		for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
			if digits++; digits > 9 {
				return 0, false
			}
			frac = frac*10 + int(s[i]-'0')
		}
		if digits == 0 {
			return 0, false
		}
		for range 9 - digits {
			frac *= 10
		}
	}
	offset := 0 // seconds east of UTC
	switch {
	case i == len(s)-1 && s[i] == 'Z':
	case i == len(s)-6 && (s[i] == '+' || s[i] == '-') && s[i+3] == ':':
		oh, om := num(i+1, 2), num(i+4, 2)
		if oh < 0 || oh > 23 || om < 0 || om > 59 {
			return 0, false
		}
		if offset = oh*3600 + om*60; s[i] == '-' {
			offset = -offset
		}
	default:
		return 0, false
	}
	t := time.Date(year, time.Month(month), day, hour, minute, sec, frac, time.UTC)
	if t.Day() != day { // February 30th, April 31st
		return 0, false
	}
	if ns = t.UnixNano() - int64(offset)*1e9; ns < 0 { // before 1970 in UTC
		return 0, false
	}
	return ns, true
}
