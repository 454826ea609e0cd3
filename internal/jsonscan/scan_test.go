package jsonscan

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSkipValue(t *testing.T) {
	for in, want := range map[string]int{
		`"a\"b" x`:                   6,
		`"a\\" x`:                    5,
		`{"k":"}","n":[1,{"x":[]}]}`: 26,
		` 123.5e-3,`:                 9,
		`true]`:                      4,
		`[[],{}]`:                    7,
	} {
		end, err := SkipValue([]byte(in), 0)
		require.NoError(t, err, in)
		assert.Equal(t, want, end, in)
	}
	for _, in := range []string{``, `"open`, `{"a":[1,2}`, `,`, `}`} {
		_, err := SkipValue([]byte(in), 0)
		assert.ErrorIs(t, err, ErrSyntax, in)
	}
}

func TestMembers(t *testing.T) {
	b := []byte(` { "a" : 1 , "b":{"c":[2]} ,"d":"x"} `)
	m := Object(b, 0)
	var keys, values []string
	for {
		k, start, ok := m.Next()
		if !ok {
			break
		}
		end := m.Skip()
		keys = append(keys, string(k))
		values = append(values, string(b[start:end]))
	}
	require.NoError(t, m.Err())
	assert.Equal(t, []string{"a", "b", "d"}, keys)
	assert.Equal(t, []string{"1", `{"c":[2]}`, `"x"`}, values)

	for _, bad := range []string{`{"a" 1}`, `{"a":}`, `{a:1}`, `{"a":1`, `[]`} {
		m := Object([]byte(bad), 0)
		for {
			if _, _, ok := m.Next(); !ok {
				break
			}
			m.Skip()
		}
		assert.ErrorIs(t, m.Err(), ErrSyntax, bad)
	}
}

func TestTailValue(t *testing.T) {
	b := []byte(`{"p":{"k":"v","d":{"x":1}}} `)
	end, ok := TailValue(b, 18, 2)
	require.True(t, ok)
	assert.Equal(t, `{"x":1}`, string(b[18:end]))
	_, ok = TailValue([]byte(`{"d":{"x":1},"s":true}`), 5, 1)
	assert.False(t, ok, "a trailing scalar member is not the payload's tail")
	_, ok = TailValue([]byte(`{"d":"str"}`), 5, 1)
	assert.False(t, ok, "only containers are sliced from the tail")
}

func TestElements(t *testing.T) {
	var got []string
	require.NoError(t, Elements([]byte(` [1, "a,b" ,{"c":[3]}] `), 0, func(e []byte) bool {
		got = append(got, string(e))
		return true
	}))
	assert.Equal(t, []string{"1", `"a,b"`, `{"c":[3]}`}, got)
	require.NoError(t, Elements([]byte(`[]`), 0, func([]byte) bool { t.Fatal("no elements"); return false }))
	assert.ErrorIs(t, Elements([]byte(`[1 2]`), 0, func([]byte) bool { return true }), ErrSyntax)
}

func TestUintAndUnquote(t *testing.T) {
	v, ok := Uint([]byte("18446744073709551615"))
	assert.True(t, ok)
	assert.Equal(t, uint64(18446744073709551615), v)
	for _, bad := range []string{"18446744073709551616", "-1", "1.5", ""} {
		_, ok := Uint([]byte(bad))
		assert.False(t, ok, bad)
	}
	s, ok := String([]byte(`"abc"`), nil)
	assert.True(t, ok)
	assert.Equal(t, "abc", string(s))
	s, ok = String([]byte(`"a\"b\u0042\ud83d\ude00\ud800x\/"`), nil)
	assert.True(t, ok)
	assert.Equal(t, "a\"bB\U0001F600\uFFFDx/", string(s))
	_, ok = String([]byte(`abc`), nil)
	assert.False(t, ok)
	assert.True(t, StringIs([]byte(`"ticker\u002e"`), "ticker."))
	assert.False(t, StringIs([]byte(`"ticker"`), "ticker."))
}

func TestSkipValueChecksWhatItWalks(t *testing.T) {
	for _, bad := range []string{
		`{"a":1,}`, `{"a" 1}`, `{"a":1 "b":2}`, `[1 2]`, `[1,]`, `{"a":[1}}`, `[tru]`, `[01]`, `[1.]`,
		`[-]`, `[1e]`, "[\"a\x01\"]", `["\x"]`, `["\u12G4"]`, `{,}`, `{1:2}`,
	} {
		_, err := SkipValue([]byte(bad), 0)
		assert.ErrorIs(t, err, ErrSyntax, bad)
	}
	deep := []byte(strings.Repeat("[", 300) + strings.Repeat("]", 300))
	end, err := SkipValue(deep, 0)
	require.NoError(t, err, "nesting past the inline stack")
	assert.Equal(t, len(deep), end)
}

func TestTailValueRefusesMembersAfterThePayload(t *testing.T) {
	for _, frame := range []string{
		`{"d":{"x":1},"m":{"y":2}}`,     // a member after the payload
		`{"d":{"x":{}},"m":{"y":{}}}`,   // the same, with nesting inside both
		`{"d":[{"x":1}],"m":[2]}`,       // arrays
		`{"d":{"x":"}"},"m":{"y":"{"}}`, // brackets inside strings
	} {
		_, ok := TailValue([]byte(frame), 5, 1)
		assert.False(t, ok, frame)
	}
	deep := strings.Repeat(`{"a":`, 40) + "1" + strings.Repeat("}", 40)
	for _, frame := range []string{
		`{"d":{"x":"\"}"},"m":{"y":{}}}`,      // an escape: counted byte by byte
		`{"d":` + deep + `,"m":` + deep + `}`, // past maxHops
	} {
		_, ok := TailValue([]byte(frame), 5, 1)
		assert.False(t, ok, frame)
	}
	for _, frame := range []string{
		`{"d":{"a":{"b":"}"},"c":[{}]}}`, // nesting its own kind, a bracket in a string
		`{"d":{"x":"\"}","y":{}}}`,       // an escape
		`{"d":{"x":` + deep + `}}`,       // past maxHops
	} {
		end, ok := TailValue([]byte(frame), 5, 1)
		require.True(t, ok, frame)
		assert.Equal(t, len(frame)-1, end, frame)
	}
}

func TestMembersDecodesEscapedKeys(t *testing.T) {
	b := []byte(`{"ch\u0061nnel":1,"\ud83d\ude00":2}`)
	m := Object(b, 0)
	var keys []string
	for {
		k, _, ok := m.Next()
		if !ok {
			break
		}
		m.Skip()
		keys = append(keys, string(k))
	}
	require.NoError(t, m.Err())
	assert.Equal(t, []string{"channel", "\U0001F600"}, keys)
}

func TestPlainLen(t *testing.T) {
	for in, want := range map[string]int{
		``: 0, `abc`: 3, `abcdefghijk"`: 11, `abcdefgh\`: 8, "abcdefghij\x1f": 10, `ab"cdefghijkl`: 2, "Ä€😀\"": 9,
	} {
		assert.Equal(t, want, PlainLen([]byte(in)), in)
	}
}

// Values finds the named members' raw values in one pass.
func TestValues(t *testing.T) {
	vals := make([][]byte, 3)
	ok := Values([]byte(` {"a":1,"b":"x","c":{"a":2},"a":3}`), 0, []string{"a", "c", "z"}, vals)
	if !ok || string(vals[0]) != "1" || string(vals[1]) != `{"a":2}` || vals[2] != nil {
		t.Fatalf("Values: %v %q", ok, vals)
	}
	clear(vals)
	if !Values([]byte(`{"a":1,"c":2,"rest":[`), 0, []string{"a", "c"}, vals[:2]) || string(vals[1]) != "2" {
		t.Fatalf("Values stops once every key is found: %q", vals)
	}
	if Values([]byte(`[1]`), 0, []string{"a"}, vals[:1]) {
		t.Fatal("not an object")
	}
}

// FuzzUint holds Uint to strconv.ParseUint on what JSON spells as an
// unsigned integer (digits, no leading zero), at every length.
func FuzzUint(f *testing.F) {
	for _, s := range []string{"0", "1737043200123", "9999999999999999999", "18446744073709551615", "18446744073709551616", "01", "1a", "", "-1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, ok := Uint([]byte(s))
		want, err := strconv.ParseUint(s, 10, 64)
		json := s != "" && strings.Trim(s, "0123456789") == "" && (s[0] != '0' || len(s) == 1)
		if ok != (err == nil && json) || ok && v != want {
			t.Fatalf("Uint(%q) = %d, %v; strconv: %d, %v", s, v, ok, want, err)
		}
	})
}
