package protocol

import (
	"encoding/json"
	"strings"
)

// ChannelServer is the server half of the channel dialects, Thalex and
// Deribit: topics are channel names, subscribed in lists by
// public/subscribe (private/subscribe for private channels) and
// acknowledged with the list of accepted channels.
type ChannelServer struct {
	RPCServer
	PrivatePrefixes []string // prefixes of the private channels
	// SnapshotNote is the layout of a notification marked whole state,
	// when the dialect marks it in the envelope (Thalex); nil: Note.
	SnapshotNote *Notification
}

// Private implements Server: the channels under PrivatePrefixes.
func (s *ChannelServer) Private(topic string) bool { return IsPrivate(topic, s.PrivatePrefixes) }

// AppendSubscribed implements Server: the list of accepted channels.
func (s *ChannelServer) AppendSubscribed(dst []byte, keys []string) []byte {
	return AppendJSONStrings(dst, keys)
}

// AppendUnsubscribed implements Server: the list of removed channels.
func (s *ChannelServer) AppendUnsubscribed(dst []byte, keys []string) []byte {
	return AppendJSONStrings(dst, keys)
}

// AppendNotification implements Server.
func (s *ChannelServer) AppendNotification(dst []byte, topic, _ string, data []byte) []byte {
	return s.Note.AppendTo(dst, topic, data)
}

// Envelope implements Server.
func (s *ChannelServer) Envelope(topic, _ string) (prefix, suffix []byte) {
	return s.Note.Envelope(topic)
}

// AppendSnapshotNotification implements Server, with SnapshotNote when set.
func (s *ChannelServer) AppendSnapshotNotification(dst []byte, topic, _ string, data []byte) []byte {
	if s.SnapshotNote != nil {
		return s.SnapshotNote.AppendTo(dst, topic, data)
	}
	return s.Note.AppendTo(dst, topic, data)
}

// SnapshotEnvelope implements Server, with SnapshotNote when set.
func (s *ChannelServer) SnapshotEnvelope(topic, _ string) (prefix, suffix []byte) {
	if s.SnapshotNote != nil {
		return s.SnapshotNote.Envelope(topic)
	}
	return s.Note.Envelope(topic)
}

// ChannelOp reads the subscription methods of the channel dialects:
// public/ and private/ subscribe, unsubscribe and unsubscribe_all.
func ChannelOp(req *Incoming) {
	scope, verb, _ := strings.Cut(req.Method, "/")
	if scope != "public" && scope != "private" {
		return
	}
	switch verb {
	case "subscribe":
		req.Op = OpSubscribe
	case "unsubscribe":
		req.Op = OpUnsubscribe
	case "unsubscribe_all":
		req.Op = OpUnsubscribeAll
	default:
		return
	}
	req.Private = scope == "private"
	if req.Op == OpUnsubscribeAll {
		return
	}
	ReadChannels(req)
}

// ReadChannels reads a channel request's params, {"channels":[...]}, into
// req.Topics, or sets req.Err.
func ReadChannels(req *Incoming) {
	var p struct {
		Channels []string `json:"channels"`
	}
	if len(req.Params) == 0 || json.Unmarshal(req.Params, &p) != nil {
		req.Err = &Error{Code: CodeInvalidParams, Message: `invalid params: want {"channels":[...]}`}
		return
	}
	req.Topics = p.Channels
}
