package protocoltest

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Respelling: the same document written another way.

// styleAll is the respelling with every option on.
const styleAll = 0xffffffff

// Respelling options, bits of a style.
const (
	styleSpace   = 1 << iota // whitespace between every token
	styleEscape              // every character of every string as \u escapes
	styleSome                // every other character escaped, '/' as \/
	styleReverse             // members in reverse order, where no key repeats
	styleUpper               // upper-case hex digits in \u escapes
)

// respell decodes frame token by token and writes it back in style; ok
// is false when the frame does not decode.
func respell(frame []byte, style uint32) ([]byte, bool) {
	dec := json.NewDecoder(bytes.NewReader(frame))
	dec.UseNumber()
	v, err := readValue(dec)
	if err != nil {
		return nil, false
	}
	var out bytes.Buffer
	v.write(&out, style)
	return out.Bytes(), true
}

// value is a decoded JSON value that keeps member order and repeats.
type value struct {
	tok     json.Token // scalar, or the opening json.Delim
	keys    []string
	members []*value
}

func readValue(dec *json.Decoder) (*value, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	v := &value{tok: tok}
	d, ok := tok.(json.Delim)
	if !ok {
		return v, nil
	}
	for dec.More() {
		if d == '{' {
			k, err := dec.Token()
			if err != nil {
				return nil, err
			}
			v.keys = append(v.keys, k.(string))
		}
		m, err := readValue(dec)
		if err != nil {
			return nil, err
		}
		v.members = append(v.members, m)
	}
	_, err = dec.Token() // the closing delimiter
	return v, err
}

func (v *value) write(out *bytes.Buffer, style uint32) {
	space := func() {
		if style&styleSpace != 0 {
			out.WriteString(" \n\t\r")
		}
	}
	switch tok := v.tok.(type) {
	case json.Delim:
		out.WriteByte(byte(tok))
		order := make([]int, len(v.members))
		for i := range order {
			order[i] = i
		}
		if style&styleReverse != 0 && uniqueKeys(v.keys) {
			for i := range order {
				order[i] = len(order) - 1 - i
			}
		}
		for n, i := range order {
			if n > 0 {
				out.WriteByte(',')
			}
			space()
			if tok == '{' {
				writeString(out, v.keys[i], style)
				space()
				out.WriteByte(':')
				space()
			}
			v.members[i].write(out, style)
			space()
		}
		if tok == '{' {
			out.WriteByte('}')
		} else {
			out.WriteByte(']')
		}
	case string:
		writeString(out, tok, style)
	case json.Number:
		out.WriteString(tok.String())
	case bool:
		fmt.Fprint(out, tok)
	case nil:
		out.WriteString("null")
	}
}

func uniqueKeys(keys []string) bool {
	seen := make(map[string]bool, len(keys))
	for _, k := range keys {
		if seen[k] {
			return false
		}
		seen[k] = true
	}
	return true
}

// writeString writes s as a JSON string, escaping as style says.
func writeString(out *bytes.Buffer, s string, style uint32) {
	hex := "\\u%04x"
	if style&styleUpper != 0 {
		hex = "\\u%04X"
	}
	out.WriteByte('"')
	n := 0
	for _, r := range s {
		n++
		escape := style&styleEscape != 0 || (style&styleSome != 0 && n%2 == 0)
		switch {
		case r == '/' && style&styleSome != 0:
			out.WriteString(`\/`)
		case escape && r > 0xffff:
			r -= 0x10000
			fmt.Fprintf(out, hex+hex, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
		case escape || r < 0x20:
			fmt.Fprintf(out, hex, r)
		case r == '"' || r == '\\':
			out.WriteByte('\\')
			out.WriteRune(r)
		default:
			out.WriteRune(r)
		}
	}
	out.WriteByte('"')
}
