package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/record"
)

// recording is what a replay serves: the topics subscribed while it was
// recorded, the answers of the calls recorded with their requests, and
// what it takes to stream the notifications of a window from disk
// (stream.go) without holding them: a replay's memory does not grow with
// the window. load reads it in one pass over the recording; it is read
// only after.
type recording struct {
	venue  string
	proto  protocol.Protocol
	dir    string
	window record.Window
	topics []string
	calls  map[string][]recordedCall // by method

	legs    int               // the Clients that read the window's notifications: more than one are a standby's legs (copies.go)
	first   time.Time         // the window's first notification's receive time
	count   int               // the window's notifications played (first arrivals, copies.go)
	keys    map[string]bool   // the routing keys of the window's notifications
	named   map[string]bool   // the topics of those keys that are ids (topicOf)
	topicOf map[string]string // a recorded subscription id → its topic (a dialect of ids: Ethereum)
	// flags are what the recorded program was told with a notification
	// (record.Flagged), by the notification's receive time and routing
	// key: the played one's, when the flags were recorded with a copy.
	flags map[noteID]client.Flags
}

// noteID names a recorded notification: its receive time (unix
// nanoseconds) and routing key.
type noteID struct {
	at  int64
	key string
}

// recordedCall is a call's params and its recorded result.
type recordedCall struct {
	params []byte // compacted
	result json.RawMessage
}

// recentNotes is how many of the latest notifications load remembers to
// find the one a Flagged record, written just after it, speaks of.
const recentNotes = 1 << 14

// load reads what dir's recording serves in the window w, keeping the
// notifications on disk.
func load(dir string, w record.Window) (*recording, error) {
	m, err := record.ReadManifest(dir)
	if err != nil {
		return nil, fmt.Errorf("failed to read the recording's manifest: %w", err)
	}
	proto, err := protocol.ByName(m.Venue)
	if err != nil {
		return nil, err
	}
	srvHalf, err := protocol.ServerByName(m.Venue)
	if err != nil {
		return nil, err
	}
	rec := &recording{venue: m.Venue, proto: proto, dir: dir, window: w, calls: make(map[string][]recordedCall),
		keys: make(map[string]bool), named: make(map[string]bool), topicOf: make(map[string]string), flags: make(map[noteID]client.Flags)}
	seen := map[string]bool{}
	type callKey struct{ client, conn, id uint64 }
	asked := map[callKey]protocol.Incoming{}
	// A dialect of subscription ids (Ethereum): each subscribe's answer
	// names the id its notifications carry on that connection.
	subIDs := srvHalf.SubscriptionID() != ""
	subscribing := map[callKey]string{} // a subscribe's request → its topic
	legs := map[uint64]bool{}           // the Clients that read the window's notifications
	cp := newCopies(2)
	// recent[at]: the latest notifications received at at, each as the
	// note played for it; ring holds their times, to forget the oldest.
	recent := make(map[int64][]recentNote)
	var ring [recentNotes]int64
	i := 0
	var f protocol.Frame
	var reqs []protocol.Incoming
	_, err = record.Read(dir, record.Window{}, func(r *record.Record) error {
		switch {
		case r.Dir == record.Flagged && w.Holds(r.Time):
			rec.flag(r, recent[r.Time.UnixNano()])
		case r.Dir == record.Sent:
			reqs, _, _ = srvHalf.ParseFrame(reqs[:0], r.Frame)
			for _, q := range reqs {
				if q.Op == protocol.OpSubscribe {
					if id, ok := numericID(q.ID); ok && subIDs && len(q.Topics) == 1 {
						subscribing[callKey{r.Client, r.Conn, id}] = q.Topics[0]
					}
					for _, t := range q.Topics {
						if !seen[t] {
							seen[t] = true
							rec.topics = append(rec.topics, t)
						}
					}
				}
				if q.Op == protocol.OpCall && q.Method != "" {
					if id, ok := numericID(q.ID); ok {
						asked[callKey{r.Client, r.Conn, id}] = protocol.Incoming{Method: q.Method, Params: bytes.Clone(q.Params)}
					}
				}
			}
		case r.Kind == protocol.KindNotification && w.Holds(r.Time):
			if rec.first.IsZero() {
				rec.first = r.Time
			}
			rec.keys[r.Topic] = true
			legs[r.Client] = true
			topic := rec.topicOf[r.Topic]
			if topic != "" {
				rec.named[topic] = true
			}
			played, first := cp.first(r.Time.UnixNano(), r.Topic, topic, r.Client, r.Frame)
			if first {
				rec.count++
			}
			at := r.Time.UnixNano()
			if old := ring[i%recentNotes]; i >= recentNotes {
				delete(recent, old)
			}
			ring[i%recentNotes] = at
			i++
			recent[at] = append(recent[at], recentNote{key: r.Topic, topic: topic, played: played})
		case r.Kind == protocol.KindResponse:
			f.Reset()
			if proto.Classify(r.Frame, &f) != nil || !f.HasID || f.Result == nil {
				return nil
			}
			k := callKey{r.Client, r.Conn, f.ID}
			if topic, ok := subscribing[k]; ok {
				delete(subscribing, k)
				var id string
				if json.Unmarshal(f.Result, &id) == nil {
					rec.topicOf[id] = topic
				}
			}
			if q, ok := asked[k]; ok {
				delete(asked, k)
				rec.calls[q.Method] = append(rec.calls[q.Method], recordedCall{params: compact(q.Params), result: bytes.Clone(f.Result)})
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	rec.legs = len(legs)
	return rec, nil
}

// recentNote is a notification load saw lately: its routing key, its
// topic where the key is an id, and the note played for it.
type recentNote struct {
	key, topic string
	played     noteID
}

// flag gives the note r speaks of (among those received at its time,
// the one of its topic: a Flagged record names the topic, a note its
// routing key; the time alone decides when the name reads as no key of
// the dialect's) the flags r holds, on the note played for it.
func (rec *recording) flag(r *record.Record, at []recentNote) {
	if len(at) == 0 {
		return // its frame was not kept (a private topic), or is outside the window
	}
	key := r.Topic
	if t, err := rec.proto.NewTopic(r.Topic); err == nil {
		key = t.Key
	}
	pick := at[0]
	for _, n := range at {
		if n.topic == r.Topic || n.key == key {
			pick = n
			break
		}
	}
	rec.flags[pick.played] |= r.Flags
}

// numericID reads a request id as the client wrote it: a number, or a
// quoted number (OKX).
func numericID(raw []byte) (uint64, bool) {
	var n json.Number
	if json.Unmarshal(bytes.Trim(raw, `"`), &n) != nil {
		return 0, false
	}
	v, err := n.Int64()
	return uint64(v), err == nil && v >= 0
}

// compact returns params without insignificant space, for comparing.
func compact(params []byte) []byte {
	var b bytes.Buffer
	if json.Compact(&b, params) != nil {
		return bytes.Clone(params)
	}
	return b.Bytes()
}
