package ethereum

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"strconv"

	"github.com/wsfan/wsfan/pkg/protocol"
)

// server is an Ethereum node's pub/sub half: eth_subscribe
// answers with a subscription id the node makes up, notifications carry
// that id, and batch arrays are taken.
type server struct{ protocol.RPCServer }

var wire = &server{protocol.RPCServer{
	DialectName:  Name,
	Head:         protocol.RPCHead,
	AllowBatches: true,
	Note:         protocol.Notification{Head: notificationHead, Mid: notificationMid, Tail: `}}`},
}}

// An Ethereum notification up to its subscription id, and between the id
// and the payload.
const (
	notificationHead = `{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":`
	notificationMid  = `,"result":`
)

// Server returns the server half of the Ethereum node dialect.
func Server() protocol.Server { return wire }

func (s *server) ParseFrame(dst []protocol.Incoming, frame []byte) ([]protocol.Incoming, bool, *protocol.Error) {
	return s.Parse(dst, frame, op)
}

// op reads eth_subscribe, whose topic is its params (see
// Topic), and eth_unsubscribe, whose one param is a subscription
// id.
func op(req *protocol.Incoming) {
	switch req.Method {
	case "eth_subscribe":
		req.Op = protocol.OpSubscribe
		topic, ok := Topic(req.Params)
		if !ok {
			req.Err = &protocol.Error{Code: protocol.CodeInvalidParams, Message: `invalid params: want ["newHeads"] or ["logs",{...}]`}
			return
		}
		req.Topics = []string{topic}
	case "eth_unsubscribe":
		req.Op = protocol.OpUnsubscribe
		var ids []string
		if len(req.Params) == 0 || json.Unmarshal(req.Params, &ids) != nil || len(ids) != 1 {
			req.Err = &protocol.Error{Code: protocol.CodeInvalidParams, Message: `invalid params: want ["0x..."]`}
			return
		}
		req.Topics = ids
	}
}

// SubscriptionID returns "0x" and 32 random hex digits, as geth does.
func (s *server) SubscriptionID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (Go 1.24)
	return "0x" + hex.EncodeToString(b[:])
}

// AppendSubscribed appends the subscription id, keys[0]; null without one.
func (s *server) AppendSubscribed(dst []byte, keys []string) []byte {
	if len(keys) == 0 {
		return append(dst, "null"...)
	}
	return protocol.AppendJSONString(dst, keys[0])
}

// AppendUnsubscribed appends whether a subscription was removed.
func (s *server) AppendUnsubscribed(dst []byte, keys []string) []byte {
	return strconv.AppendBool(dst, len(keys) > 0)
}

// AppendNotification keys the notification by subID.
func (s *server) AppendNotification(dst []byte, _, subID string, data []byte) []byte {
	return s.Note.AppendTo(dst, subID, data)
}

// Envelope keys the notification by subID.
// AppendSnapshotNotification is AppendNotification: a node marks no
// snapshot.
func (s *server) AppendSnapshotNotification(dst []byte, topic, subID string, data []byte) []byte {
	return s.AppendNotification(dst, topic, subID, data)
}

// SnapshotEnvelope is Envelope: a node marks no snapshot.
func (s *server) SnapshotEnvelope(topic, subID string) (prefix, suffix []byte) {
	return s.Envelope(topic, subID)
}

func (s *server) Envelope(_, subID string) (prefix, suffix []byte) {
	return s.Note.Envelope(subID)
}

// Topic returns the topic an eth_subscribe request's params name,
// as NewTopic expects it: the subscription kind alone ("newHeads") when it
// is the only param, else the compacted params array: the topic a server
// files the subscription under, as the client asked for it.
func Topic(params []byte) (string, bool) {
	var ps []json.RawMessage
	if json.Unmarshal(params, &ps) != nil || len(ps) == 0 {
		return "", false
	}
	var kind string
	if json.Unmarshal(ps[0], &kind) != nil || kind == "" {
		return "", false
	}
	if len(ps) == 1 {
		return kind, true
	}
	var buf bytes.Buffer
	if json.Compact(&buf, params) != nil {
		return "", false
	}
	return buf.String(), true
}
