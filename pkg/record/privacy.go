package record

import (
	"bytes"
	"cmp"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/wsfan/wsfan/pkg/protocol"
)

// privacy decides what of a connection's frames carries account data,
// left out of a recording unless Options.Private: the notifications of
// private topics, and the answers to calls that are not read-only. It
// is owned by the Recorder's writer goroutine.
type privacy struct {
	proto   protocol.Protocol
	all     bool
	methods protocol.MethodClassifier // nil: the venue names no read-only call, so no call's answer is kept
	server  protocol.Server           // the venue's server half, which reads a request's op; nil when none is registered
	reqs    []protocol.Incoming
	// kept holds the ids of written calls whose answers are kept;
	// bounded by the calls in flight.
	kept map[string]bool
	// private caches whether a routing key is a private topic's, at most
	// maxKeys of them (then it starts over).
	private map[string]bool
}

// maxKeys bounds privacy.private.
const maxKeys = 10_000

func newPrivacy(p protocol.Protocol, all bool) *privacy {
	srv, _ := protocol.ServerByName(p.Name())
	return &privacy{proto: p, all: all, methods: p.Venue().Methods, server: srv, kept: make(map[string]bool), private: make(map[string]bool)}
}

// sent notes a written request whose answer may be kept: a subscribe's
// (its answer names a subscription id a replay needs, and no account
// data), and a read-only call's.
func (p *privacy) sent(frame []byte) {
	if p.all {
		return
	}
	if p.server != nil {
		p.reqs, _, _ = p.server.ParseFrame(p.reqs[:0], frame)
		for _, q := range p.reqs {
			if q.Err == nil && (q.Op == protocol.OpSubscribe || (q.Op == protocol.OpCall && p.readOnly(q.Method))) {
				p.kept[idKey(q.ID)] = true
			}
		}
		return
	}
	if p.methods == nil {
		return
	}
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Op     string          `json:"op"`
	}
	if json.Unmarshal(frame, &req) != nil || len(req.ID) == 0 {
		return
	}
	if m := cmp.Or(req.Method, req.Op); m != "" && p.readOnly(m) {
		p.kept[idKey(req.ID)] = true
	}
}

// keep reports whether a classified read frame is recorded.
func (p *privacy) keep(rec *Record, f *protocol.Frame) bool {
	if p.all {
		return true
	}
	switch f.Kind {
	case protocol.KindNotification:
		return p.keepTopic(rec.Topic)
	case protocol.KindResponse:
		if !f.HasID {
			return true // an error without an id names no call
		}
		key := strconv.FormatUint(f.ID, 10)
		kept := p.kept[key]
		delete(p.kept, key)
		return kept
	case protocol.KindBatch:
		return false // answers to several calls: kept only with Options.Private
	}
	return true
}

// keepTopic reports whether what is recorded of topic (a routing key,
// or a topic's name) is kept: a private topic's is not.
func (p *privacy) keepTopic(topic string) bool {
	if p.all {
		return true
	}
	private, ok := p.private[topic]
	if !ok {
		t, err := p.proto.NewTopic(topic)
		private = err == nil && t.Private // a key that is not a topic name (an Ethereum id) is public data
		if len(p.private) >= maxKeys {
			clear(p.private)
		}
		p.private[topic] = private
	}
	return !private
}

// idKey is a request id as a response's numeric id reads: JSON numbers
// and OKX's quoted numbers alike.
func idKey(raw json.RawMessage) string {
	return strings.Trim(string(bytes.TrimSpace(raw)), `"`)
}

// readOnly reports whether the venue names method as reading only.
func (p *privacy) readOnly(method string) bool {
	return p.methods != nil && p.methods.ClassifyMethod(method, nil).ReadOnly
}
