package natsbridge

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEncodeTopic(t *testing.T) {
	for _, tc := range []struct{ topic, want string }{
		{"ticker.BTC-PERPETUAL.raw", "ticker.BTC-PERPETUAL.raw"},
		{"book.BTC-PERPETUAL.none.10.100ms", "book.BTC-PERPETUAL.none.10.100ms"},
		{"L2Book:BTCUSD", "L2Book=3ABTCUSD"},
		{"newHeads", "newHeads"},
		{`["logs",{"address":"0x1"}]`, "=5B=22logs=22=2C=7B=22address=22=3A=220x1=22=7D=5D"},
		{"a*b", "a=2Ab"},
		{"*", "=2A"},
		{"a.>", "a.=3E"},
		{"with space", "with=20space"},
		{"tab\tnl\n", "tab=09nl=0A"},
		{"a=b", "a=3Db"},
		{".a", "=2Ea"},
		{"a.", "a=2E"},
		{"a..b", "a.=2Eb"},
		{"...", "=2E.=2E"},
		{".", "=2E"},
		{"$SYS", "=24SYS"},
		{"é", "=C3=A9"},
		{"", "="},
		{"user/orders_1", "user/orders_1"},
	} {
		got, hashed := EncodeTopic(tc.topic)
		assert.Equal(t, tc.want, got, "EncodeTopic(%q)", tc.topic)
		assert.False(t, hashed, tc.topic)
		back, err := DecodeTopic(got)
		require.NoError(t, err, tc.topic)
		assert.Equal(t, tc.topic, back)
	}
}

func TestEncodeTopicHashesLongNames(t *testing.T) {
	long := strings.Repeat("ticker.BTC-PERPETUAL.", 20)
	enc, hashed := EncodeTopic(long)
	require.True(t, hashed)
	assert.Regexp(t, `^=H[0-9a-f]{64}$`, enc)
	_, err := DecodeTopic(enc)
	assert.ErrorIs(t, err, ErrHashedTopic)

	other, _ := EncodeTopic(long + "x")
	assert.NotEqual(t, enc, other)

	// Just below the limit stays readable; escapes count at their
	// encoded length.
	fits := strings.Repeat("a", MaxEncodedTopic)
	enc, hashed = EncodeTopic(fits)
	assert.False(t, hashed)
	assert.Equal(t, fits, enc)
	_, hashed = EncodeTopic(strings.Repeat(":", MaxEncodedTopic/3+1))
	assert.True(t, hashed)
}

func TestDecodeTopicRejectsNonCanonical(t *testing.T) {
	for _, s := range []string{
		"a=2eb",    // lower-case hex
		"=41",      // 'A' needs no escape
		"a=2E=2Eb", // the first dot is a separator
		"a=",       // truncated
		"a=4",      // truncated
		"a=GG",     // not hex
		"a:b",      // ':' must be escaped
		"a..b",     // empty token
		".a",       // empty token
		"a b",
		"=Hxyz", // malformed hash
		"",
	} {
		_, err := DecodeTopic(s)
		assert.Error(t, err, "DecodeTopic(%q)", s)
	}
}

// subjectRE is a subject of non-empty tokens with no wildcard and no
// whitespace, and kvKeyRE a valid JetStream KV key (nats.go's rule).
var (
	subjectRE = regexp.MustCompile(`^[^.*>\s]+(\.[^.*>\s]+)*$`)
	kvKeyRE   = regexp.MustCompile(`^[-/_=\.a-zA-Z0-9]+$`)
)

// FuzzTopic checks that every topic encodes to valid subject tokens and
// a valid KV key within the length bound, and decodes back exactly (or
// is hashed). Seeds live in testdata/fuzz/FuzzTopic.
func FuzzTopic(f *testing.F) {
	for _, s := range []string{"ticker.BTC-PERPETUAL.raw", "L2Book:BTCUSD", "a..b", ".", "", "=", "=H", "*.>", "\x00\xff", strings.Repeat("x.", 150)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, topic string) {
		enc, hashed := EncodeTopic(topic)
		if !subjectRE.MatchString(enc) || !kvKeyRE.MatchString(enc) || strings.HasPrefix(enc, ".") || strings.HasSuffix(enc, ".") {
			t.Fatalf("EncodeTopic(%q) = %q: not a valid subject and KV key", topic, enc)
		}
		if !hashed && len(enc) > MaxEncodedTopic {
			t.Fatalf("EncodeTopic(%q) = %q: %d bytes", topic, enc, len(enc))
		}
		back, err := DecodeTopic(enc)
		if hashed {
			if err != ErrHashedTopic {
				t.Fatalf("DecodeTopic(%q) = %v, want ErrHashedTopic", enc, err)
			}
			return
		}
		if err != nil || back != topic {
			t.Fatalf("DecodeTopic(EncodeTopic(%q)) = %q, %v", topic, back, err)
		}
	})
}

// FuzzDecodeTopic feeds arbitrary strings to DecodeTopic: it must never
// panic, and what it accepts must be what EncodeTopic returns for the
// decoded topic (one subject per topic). Seeds live in
// testdata/fuzz/FuzzDecodeTopic.
func FuzzDecodeTopic(f *testing.F) {
	for _, s := range []string{"ticker.BTC-PERPETUAL.raw", "L2Book=3ABTCUSD", "a.=2Eb", "=", "=H", "=2", "a=2e", "..", "=H" + strings.Repeat("0", 64)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		topic, err := DecodeTopic(s)
		if err != nil {
			return
		}
		if enc, _ := EncodeTopic(topic); enc != s {
			t.Fatalf("DecodeTopic(%q) = %q, which encodes to %q", s, topic, enc)
		}
	})
}
