package natsbridge

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// MaxEncodedTopic is the longest encoded topic carried in a subject as
// is; a topic whose encoding is longer is hashed (see EncodeTopic).
const MaxEncodedTopic = 200

// hashPrefix starts a hashed topic. "=H" can never start an escaped
// topic: '=' is always followed by two upper-case hex digits there.
const hashPrefix = "=H"

// ErrHashedTopic is returned by DecodeTopic for a hashed topic: the real
// name is only in the message's Wsfan-Topic header.
var ErrHashedTopic = errors.New("natsbridge: hashed topic: the name is in the " + HeaderTopic + " header")

// EncodeTopic maps an exchange topic to the tokens that carry it in a
// subject (wsfan.<group>.t.<encoded>). The encoding is reversible
// (DecodeTopic) and its result is valid both as subject tokens and as a
// JetStream KV key:
//
//   - A-Z a-z 0-9 '-' '_' '/' stay as they are;
//   - '.' stays a token separator, so wsfan.<group>.t.ticker.> matches
//     every "ticker.…" topic, except where it would make an empty token
//     (first or last byte, or right after another separator), where it
//     is escaped;
//   - every other byte ('*', '>', ':', '=', space, controls, non-ASCII…)
//     becomes '=' and two upper-case hex digits: "L2Book:BTCUSD" is
//     "L2Book=3ABTCUSD";
//   - the empty topic is "=".
//
// A topic whose encoding is longer than MaxEncodedTopic is replaced by
// "=H" and the hex SHA-256 of the topic (one token, so wildcards do not
// see inside it), and hashed reports true: publishers then carry the
// topic in the Wsfan-Topic header.
func EncodeTopic(topic string) (encoded string, hashed bool) {
	if topic == "" {
		return "=", false
	}
	var b strings.Builder
	b.Grow(len(topic) + 8)
	sep := true // the last byte written was a separator (or nothing was)
	for i := 0; i < len(topic); i++ {
		c := topic[i]
		switch {
		case c == '.' && !sep && i < len(topic)-1:
			b.WriteByte('.')
			sep = true
			continue
		case literal(c):
			b.WriteByte(c)
		default:
			b.WriteByte('=')
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&15])
		}
		sep = false
		if b.Len() > MaxEncodedTopic {
			return hashTopic(topic), true
		}
	}
	return b.String(), false
}

// DecodeTopic reverses EncodeTopic. It returns ErrHashedTopic for a
// hashed topic and an error for a string EncodeTopic never returns.
func DecodeTopic(encoded string) (string, error) {
	if strings.HasPrefix(encoded, hashPrefix) {
		if !hashedRE.MatchString(encoded) {
			return "", fmt.Errorf("natsbridge: malformed hashed topic %q", encoded)
		}
		return "", ErrHashedTopic
	}
	if encoded == "=" {
		return "", nil
	}
	out := make([]byte, 0, len(encoded))
	for i := 0; i < len(encoded); i++ {
		c := encoded[i]
		switch {
		case c == '=':
			if i+2 >= len(encoded) {
				return "", fmt.Errorf("natsbridge: truncated escape in topic %q", encoded)
			}
			hi, lo := unhex(encoded[i+1]), unhex(encoded[i+2])
			if hi < 0 || lo < 0 {
				return "", fmt.Errorf("natsbridge: bad escape in topic %q", encoded)
			}
			out = append(out, byte(hi<<4|lo))
			i += 2
		case c == '.' || literal(c):
			out = append(out, c)
		default:
			return "", fmt.Errorf("natsbridge: byte %q not allowed in encoded topic %q", c, encoded)
		}
	}
	topic := string(out)
	// Escapes are optional for some bytes (a '.' or a letter may be
	// written as =2E or =41); only the canonical form is accepted, so
	// that a topic has exactly one subject.
	if again, _ := EncodeTopic(topic); again != encoded {
		return "", fmt.Errorf("natsbridge: topic %q is not in canonical form (want %q)", encoded, again)
	}
	return topic, nil
}

var hashedRE = regexp.MustCompile(`^=H[0-9a-f]{64}$`)

const hexDigits = "0123456789ABCDEF"

func literal(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '/'
}

// unhex decodes an upper-case hex digit, or returns -1.
func unhex(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'A' <= c && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

func hashTopic(topic string) string {
	sum := sha256.Sum256([]byte(topic))
	return hashPrefix + hex.EncodeToString(sum[:])
}

// CheckGroup reports whether group can name a group (Join refuses the
// same names), so a configuration can be refused before joining.
func CheckGroup(group string) error {
	if !groupRE.MatchString(group) {
		return fmt.Errorf("natsbridge: invalid group %q (want 1-64 of A-Z a-z 0-9 _ -)", group)
	}
	return nil
}

// groupRE is what a group name may be: it is used in subjects, stream
// and bucket names.
var groupRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// memberRE is what a member id may be: it is a KV key.
var memberRE = regexp.MustCompile(`^[A-Za-z0-9_=/-][A-Za-z0-9_=/.-]{0,127}$`)

// subjects are the names one group uses in NATS.
type subjects struct {
	group  string
	live   string // "wsfan.<group>.t." + encoded topic
	lvc    string // "wsfan.<group>.lvc." + encoded topic
	rpc    string // request/reply to the leader
	leader string // the leader's reports of its upstream
}

func newSubjects(group string) subjects {
	root := "wsfan." + group + "."
	return subjects{group: group, live: root + "t.", lvc: root + "lvc.", rpc: root + "rpc", leader: root + "leader"}
}

// Bucket and stream names of a group.
func leaseBucket(group string) string { return "wsfan_" + group + "_lease" }
func wantsBucket(group string) string { return "wsfan_" + group + "_wants" }
func lvcStream(group string) string   { return "wsfan_" + group + "_lvc" }

// topicNames is a topic's subjects; hashed says the topic must travel in
// the Wsfan-Topic header.
type topicNames struct {
	topic  string
	live   string
	lvc    string
	hashed bool
}

func (s subjects) topic(topic string) topicNames {
	enc, hashed := EncodeTopic(topic)
	return topicNames{topic: topic, live: s.live + enc, lvc: s.lvc + enc, hashed: hashed}
}
