package protocol

import (
	"fmt"
	"iter"
	"strconv"
	"strings"

	"github.com/wsfan/wsfan/internal/jsonscan"
)

// ChannelDialect is the subscription model Thalex and Deribit share: a
// topic is a channel name, one request subscribes a list of channels, and
// the result is the list the server accepted.
type ChannelDialect struct {
	DialectName     string   // the dialect's name, as Name returns it
	PrivatePrefixes []string // prefixes of the channels subscribed with private/subscribe
	SequencedPrefix string   // channels carrying change ids; "" for none
	// MaxChannels caps the channels of one request when the caller sets
	// no chunk: the exchange's own limit. 0: no cap.
	MaxChannels int
	// MaxFrameBytes caps the size of one request frame, whatever the
	// chunk: a server refuses a larger one. 0: no cap.
	MaxFrameBytes int
	// UnsubscribeMethod is the one method that unsubscribes public and
	// private channels alike, in one list (Thalex's "unsubscribe"); ""
	// for public/unsubscribe and private/unsubscribe.
	UnsubscribeMethod string
}

// IsPrivate reports whether channel starts with one of prefixes.
func IsPrivate(channel string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(channel, p) {
			return true
		}
	}
	return false
}

// Name implements Protocol.
func (d *ChannelDialect) Name() string { return d.DialectName }

// NewTopic implements Protocol: a topic is a channel name, its own routing key.
func (d *ChannelDialect) NewTopic(name string) (*Topic, error) {
	if name == "" || strings.ContainsAny(name, "\"\\ \t\r\n") {
		return nil, fmt.Errorf("%w: %s channel %q", ErrInvalidTopic, d.DialectName, name)
	}
	t := &Topic{Name: name, Key: name, Sub: AppendJSONString(nil, name), Private: IsPrivate(name, d.PrivatePrefixes)}
	t.Sequenced = d.SequencedPrefix != "" && strings.HasPrefix(name, d.SequencedPrefix)
	return t, nil
}

// AppendRequest implements Protocol.
func (d *ChannelDialect) AppendRequest(dst []byte, id uint64, method string, params []byte) ([]byte, error) {
	return AppendRPC(dst, id, method, params, "{}"), nil
}

// Subscribe implements Protocol: the topics in channel lists, public before private.
func (d *ChannelDialect) Subscribe(b *Batch, topics []*Topic, nextID func() uint64, chunk int) {
	d.encode(b, topics, nextID, chunk, "public/subscribe", "private/subscribe")
}

// Unsubscribe implements Protocol.
func (d *ChannelDialect) Unsubscribe(b *Batch, topics []*Topic, _ []string, nextID func() uint64, chunk int) {
	if d.UnsubscribeMethod != "" {
		d.encodeScope(b, topics, nextID, chunk, d.UnsubscribeMethod)
		return
	}
	d.encode(b, topics, nextID, chunk, "public/unsubscribe", "private/unsubscribe")
}

// encode writes public topics first, then private ones, each as channel
// lists of at most chunk names, straight from the cached names.
func (d *ChannelDialect) encode(b *Batch, topics []*Topic, nextID func() uint64, chunk int, publicMethod, privateMethod string) {
	public, private := topics, []*Topic(nil)
	for i, t := range topics {
		if t.Private {
			public, private = splitPrivate(topics, i)
			break
		}
	}
	d.encodeScope(b, public, nextID, chunk, publicMethod)
	d.encodeScope(b, private, nextID, chunk, privateMethod)
}

// splitPrivate separates private topics, the first of which is at i.
func splitPrivate(topics []*Topic, i int) (public, private []*Topic) {
	public = append(make([]*Topic, 0, len(topics)), topics[:i]...)
	for _, t := range topics[i:] {
		if t.Private {
			private = append(private, t)
		} else {
			public = append(public, t)
		}
	}
	return public, private
}

// requestOverhead is the most a channel request adds to its channels:
// {"jsonrpc":"2.0","id":ID,"method":"METHOD","params":{"channels":[...]}}
// with a 20-digit id, the method's length aside.
const requestOverhead = 80

// encodeScope writes topics as requests of method: each of at most chunk
// channels (MaxChannels when chunk <= 0) and at most MaxFrameBytes long.
// A channel too long for a frame of its own still goes out alone, and the
// server's refusal names it.
func (d *ChannelDialect) encodeScope(b *Batch, topics []*Topic, nextID func() uint64, chunk int, method string) {
	if chunk <= 0 {
		chunk = d.MaxChannels
	}
	for part, size := range Runs(topics, chunk, d.MaxFrameBytes, requestOverhead+len(method)) {
		id := nextID()
		m := b.NewMessage(size)
		m = append(m, `{"jsonrpc":"2.0","id":`...)
		m = strconv.AppendUint(m, id, 10)
		m = append(m, `,"method":"`...)
		m = append(m, method...)
		m = append(m, `","params":{"channels":[`...)
		for i, t := range part {
			if i > 0 {
				m = append(m, ',')
			}
			m = append(m, t.Sub...)
		}
		m = append(m, "]}}"...)
		b.Requests = append(b.Requests, Request{ID: id, Topics: part, Message: len(b.Messages)})
		b.Messages = append(b.Messages, m)
	}
}

// Ack marks every channel missing from the accepted list as refused.
func (d *ChannelDialect) Ack(req *Request, result []byte, keys []string) error {
	accepted := make(map[string]struct{}, len(req.Topics))
	err := jsonscan.Elements(result, 0, func(e []byte) bool {
		if s, ok := jsonscan.AppendString(nil, e); ok {
			accepted[string(s)] = struct{}{}
		}
		return true
	})
	if err != nil {
		return fmt.Errorf("%s: subscribe result is not a list of channels: %.100s", d.DialectName, result)
	}
	for i, t := range req.Topics {
		keys[i] = ""
		if _, ok := accepted[t.Name]; ok {
			keys[i] = t.Key
		}
	}
	return nil
}

// HeartbeatReply implements Protocol.
func (d *ChannelDialect) HeartbeatReply(dst []byte, id uint64) []byte { return dst }

// Handshake implements Protocol.
func (d *ChannelDialect) Handshake() []Call { return nil }

// Venue returns the zero Venue; a dialect that documents more overrides
// it.
func (d *ChannelDialect) Venue() Venue { return Venue{} }

// Sequence implements Protocol.
func (d *ChannelDialect) Sequence([]byte) (uint64, uint64, bool) { return 0, 0, false }

// Runs splits topics into the runs one request each carries, in order:
// at most chunk topics a run (no cap when chunk <= 0), and at most
// maxBytes long (no cap when 0) once overhead and each topic's Sub and
// separator are counted. A topic too long for a run of its own still
// goes alone, and the server's refusal names it. size is the run's
// request's length, to allocate it at once.
func Runs(topics []*Topic, chunk, maxBytes, overhead int) iter.Seq2[[]*Topic, int] {
	return func(yield func([]*Topic, int) bool) {
		for len(topics) > 0 {
			n, size := 0, overhead
			for n < len(topics) && (chunk <= 0 || n < chunk) {
				add := len(topics[n].Sub) + 1
				if maxBytes > 0 && n > 0 && size+add > maxBytes {
					break
				}
				size += add
				n++
			}
			if !yield(topics[:n:n], size) {
				return
			}
			topics = topics[n:]
		}
	}
}

// ClassifyResponseMember handles the members every JSON-RPC response
// shares; it reports whether key was one of them. A repeated member
// counts as its last occurrence.
func ClassifyResponseMember(m *jsonscan.Members, frame []byte, key []byte, start int, f *Frame) bool {
	switch string(key) {
	case "id":
		f.ID, f.HasID = jsonscan.Uint(frame[start:m.Skip()])
	case "result":
		f.Result = frame[start:m.SkipTail(1)]
	case "error":
		f.Error = frame[start:m.Skip()]
	default:
		return false
	}
	f.Kind = KindResponse
	return true
}

// ClearResponse forgets the response members of a frame that turned out
// to be something else.
func (f *Frame) ClearResponse() {
	f.Kind, f.ID, f.HasID, f.Result, f.Error = KindUnknown, 0, false, nil, nil
}
