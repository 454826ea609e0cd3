package record

import (
	"bytes"
	"encoding/binary"
	"testing"
	"time"

	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// FuzzDecodeRecord reads any bytes as a record's body, as a reader does
// a segment cut or damaged anywhere: it never panics, and what it reads
// lies within the bytes; a record it appended reads back the same.
func FuzzDecodeRecord(f *testing.F) {
	seed := func(r Record) []byte {
		b := appendRecord(nil, &r)
		_, n := binary.Uvarint(b)
		return b[n:]
	}
	f.Add(seed(Record{Time: time.Unix(0, 1764266400000000000), Dir: Received, Kind: protocol.KindNotification, Snapshot: true,
		Client: 1, Conn: 2, Topic: "ticker.BTC-PERPETUAL.raw", Frame: []byte(`{"channel_name":"ticker.BTC-PERPETUAL.raw","notification":{}}`)}))
	f.Add(seed(Record{Time: time.Unix(0, 5), Dir: Flagged, Flags: client.FlagReconnected | client.FlagGap, Topic: "book.BTC-PERPETUAL.100ms"}))
	f.Add(seed(Record{Time: time.Unix(0, 7), Dir: Sent, Client: 300, Conn: 1 << 40, Endpoint: 3, Frame: []byte(`{"id":1}`)}))
	f.Add([]byte{})
	f.Add([]byte("R\x03\x00\x00\x00\x00\x00\x00\x00\x00\x01\x01\x00\xff\xff\x03"))
	f.Fuzz(func(t *testing.T, body []byte) {
		var r Record
		names := map[string]string{}
		if decodeRecord(body, &r, names) != nil {
			return
		}
		if len(r.Frame) > 0 && !bytes.HasSuffix(body, r.Frame) {
			t.Fatalf("frame %q is not the body's end", r.Frame)
		}
		if !bytes.Contains(body, []byte(r.Topic)) {
			t.Fatalf("topic %q is not in the body", r.Topic)
		}
		again := appendRecord(nil, &r)
		_, n := binary.Uvarint(again)
		var back Record
		if err := decodeRecord(again[n:], &back, names); err != nil {
			t.Fatalf("a record appended does not read back: %v", err)
		}
		if !back.Time.Equal(r.Time) || back.Dir != r.Dir || back.Kind != r.Kind || back.Client != r.Client || back.Conn != r.Conn ||
			back.Endpoint != r.Endpoint || back.Topic != r.Topic || !bytes.Equal(back.Frame, r.Frame) ||
			(r.Dir == Flagged && back.Flags != r.Flags) || (r.Dir != Flagged && back.Snapshot != r.Snapshot) {
			t.Fatalf("read back %+v, appended %+v", back, r)
		}
	})
}
