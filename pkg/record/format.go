package record

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// Direction is which way a recorded frame went.
type Direction byte

const (
	// Received is a frame the upstream sent.
	Received Direction = 'R'
	// Sent is a frame sent upstream (credentials redacted).
	Sent Direction = 'W'
	// Flagged is what wsfan told a program with a notification it
	// received: the flags (client.Flags, the frame's own snapshot mark
	// aside) of the message on Topic (the topic's name) read at Time. It
	// has no frame; it follows the Received record it speaks of, which
	// has the same Time.
	Flagged Direction = 'F'
)

// Record is one recorded frame.
type Record struct {
	Time     time.Time // when it was read (or written)
	Dir      Direction
	Kind     protocol.Kind // as the venue's protocol classified it (KindUnknown for written frames)
	Snapshot bool          // the venue marks it a whole state
	Flags    client.Flags  // a Flagged record's flags; 0 for the others
	Client   uint64        // client.ConnInfo's numbers
	Conn     uint64
	Endpoint int
	Topic    string // a notification's routing key, a Flagged record's topic name; "" for other frames
	Frame    []byte // verbatim; it belongs to the caller of the reader's callback only during the call
}

// maxNames bounds the topics a reader keeps the strings of.
const maxNames = 10_000

// errCorrupt marks a record that does not decode.
var errCorrupt = errors.New("corrupt record")

// appendRecord appends r, length-prefixed, to dst.
func appendRecord(dst []byte, r *Record) []byte {
	var head [3 + 8 + 4*binary.MaxVarintLen64]byte
	h := head[:0]
	var flags byte
	switch {
	case r.Dir == Flagged:
		flags = byte(r.Flags)
	case r.Snapshot:
		flags = 1
	}
	h = append(h, byte(r.Dir), byte(r.Kind), flags)
	h = binary.LittleEndian.AppendUint64(h, uint64(r.Time.UnixNano()))
	h = binary.AppendUvarint(h, r.Client)
	h = binary.AppendUvarint(h, r.Conn)
	h = binary.AppendUvarint(h, uint64(r.Endpoint))
	h = binary.AppendUvarint(h, uint64(len(r.Topic)))
	n := len(h) + len(r.Topic) + len(r.Frame)
	dst = binary.AppendUvarint(dst, uint64(n))
	dst = append(dst, h...)
	dst = append(dst, r.Topic...)
	return append(dst, r.Frame...)
}

// decodeRecord reads a record's body (after its length) into r; r.Frame
// aliases b. r.Topic is taken from names, the topics read so far (a
// feed has few: one string each, not one a record), and added to it.
func decodeRecord(b []byte, r *Record, names map[string]string) error {
	if len(b) < 11 {
		return fmt.Errorf("%w: %d bytes", errCorrupt, len(b))
	}
	r.Dir, r.Kind, r.Snapshot, r.Flags = Direction(b[0]), protocol.Kind(b[1]), false, 0
	if r.Dir == Flagged {
		r.Flags = client.Flags(b[2])
	} else {
		r.Snapshot = b[2]&1 != 0
	}
	r.Time = time.Unix(0, int64(binary.LittleEndian.Uint64(b[3:11])))
	b = b[11:]
	var vals [4]uint64
	for i := range vals {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			return fmt.Errorf("%w: bad header", errCorrupt)
		}
		vals[i], b = v, b[n:]
	}
	if vals[3] > uint64(len(b)) {
		return fmt.Errorf("%w: topic past the record", errCorrupt)
	}
	r.Client, r.Conn, r.Endpoint = vals[0], vals[1], int(vals[2])
	topic := b[:vals[3]]
	name, ok := names[string(topic)]
	if !ok {
		if len(names) >= maxNames {
			clear(names)
		}
		name = string(topic)
		names[name] = name
	}
	r.Topic, r.Frame = name, b[vals[3]:]
	return nil
}
