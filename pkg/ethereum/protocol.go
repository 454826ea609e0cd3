package ethereum

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/wsfan/wsfan/internal/jsonscan"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// dialect speaks the eth_subscribe pub/sub API of Ethereum nodes:
//
//	→ {"jsonrpc":"2.0","id":1,"method":"eth_subscribe","params":["newHeads"]}
//	← {"jsonrpc":"2.0","id":1,"result":"0xcd0c3e8af590364c09d0fa6a1210faf5"}
//	← {"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"0xcd0c…","result":{...}}}
//
// A topic is "newHeads" (any bare subscription name) or the whole params
// array as JSON, such as ["logs",{"address":"0x…"}]. Subscription ids are
// assigned by the node on every connection, so Topic.Key is empty and Ack
// returns the new id. Several subscribes go out as one batch array.
type dialect struct{}

// Protocol returns the client half of the Ethereum node dialect.
func Protocol() protocol.Protocol { return dialect{} }

func (dialect) Name() string { return Name }

func (dialect) NewTopic(name string) (*protocol.Topic, error) {
	t := &protocol.Topic{Name: name}
	switch trimmed := strings.TrimSpace(name); {
	case trimmed == "":
		return nil, fmt.Errorf("%w: empty ethereum subscription", protocol.ErrInvalidTopic)
	case trimmed[0] == '[':
		var buf bytes.Buffer
		if err := json.Compact(&buf, []byte(name)); err != nil {
			return nil, fmt.Errorf("%w: ethereum params %q: %v", protocol.ErrInvalidTopic, name, err)
		}
		var params []json.RawMessage
		if err := json.Unmarshal(buf.Bytes(), &params); err != nil || len(params) == 0 {
			return nil, fmt.Errorf("%w: ethereum params %q must be a non-empty array", protocol.ErrInvalidTopic, name)
		}
		t.Sub = buf.Bytes()
	default:
		t.Sub = append(protocol.AppendJSONString([]byte{'['}, name), ']')
	}
	t.Retracts = bytes.HasPrefix(t.Sub, []byte(`["logs"`))
	t.Backfill = string(t.Sub) == `["newHeads"]` || t.Retracts
	return t, nil
}

func (dialect) AppendRequest(dst []byte, id uint64, method string, params []byte) ([]byte, error) {
	return protocol.AppendRPC(dst, id, method, params, "[]"), nil
}

// batchTooLarge reports whether an error answers a batch array over the
// node's cap: go-ethereum's -32600 "batch too large" (rpc/handler.go),
// or a provider's -32600 naming the batch and its size or limit.
func batchTooLarge(code int, message string) bool {
	m := strings.ToLower(message)
	return code == protocol.CodeInvalidRequest && strings.Contains(m, "batch") &&
		(strings.Contains(m, "large") || strings.Contains(m, "limit") || strings.Contains(m, "exceed"))
}

// MaxBatch is how many calls one batch array carries unless
// client.WithResubscribeChunk says otherwise: nodes cap batches
// (go-ethereum's --rpc.batch-request-limit, 1,000 by default; hosted
// providers 20 or fewer over WebSocket, Alchemy's documented cap being
// 20), and a node over its cap answers the first call with -32600 "batch
// too large" and the others not at all.
const MaxBatch = 20

func (dialect) Subscribe(b *protocol.Batch, topics []*protocol.Topic, nextID func() uint64, chunk int) {
	encodeBatch(b, topics, nextID, chunk, "eth_subscribe", func(t *protocol.Topic, _ int) []byte { return t.Sub })
}

func (dialect) Unsubscribe(b *protocol.Batch, topics []*protocol.Topic, keys []string, nextID func() uint64, chunk int) {
	encodeBatch(b, topics, nextID, chunk, "eth_unsubscribe", func(_ *protocol.Topic, i int) []byte {
		return append(protocol.AppendJSONString([]byte{'['}, keys[i]), ']')
	})
}

// The fixed parts of one batch element.
const (
	requestPrefix = `{"jsonrpc":"2.0","id":`
	requestMethod = `,"method":"`
	requestParams = `","params":`
)

// encodeBatch writes one request per topic, grouped into batch arrays
// of at most chunk requests (MaxBatch when chunk <= 0; a single request
// goes out bare).
func encodeBatch(b *protocol.Batch, topics []*protocol.Topic, nextID func() uint64, chunk int, method string, params func(*protocol.Topic, int) []byte) {
	if chunk <= 0 {
		chunk = MaxBatch
	}
	offset := 0
	protocol.Chunks(topics, chunk, func(part []*protocol.Topic) {
		size := 2
		for i, t := range part {
			size += len(requestPrefix) + 20 + len(requestMethod) + len(method) + len(requestParams) + len(params(t, offset+i)) + 2
		}
		m := b.NewMessage(size)
		if len(part) > 1 {
			m = append(m, '[')
		}
		for i, t := range part {
			if i > 0 {
				m = append(m, ',')
			}
			id := nextID()
			m = append(m, requestPrefix...)
			m = strconv.AppendUint(m, id, 10)
			m = append(m, requestMethod...)
			m = append(m, method...)
			m = append(m, requestParams...)
			m = append(m, params(t, offset+i)...)
			m = append(m, '}')
			b.Requests = append(b.Requests, protocol.Request{ID: id, Topics: part[i : i+1 : i+1], Message: len(b.Messages)})
		}
		if len(part) > 1 {
			m = append(m, ']')
		}
		offset += len(part)
		b.Messages = append(b.Messages, m)
	})
}

// Ack takes the subscription id the node assigned.
func (dialect) Ack(req *protocol.Request, result []byte, keys []string) error {
	s, ok := jsonscan.AppendString(nil, bytes.TrimSpace(result))
	if !ok || len(s) == 0 {
		return fmt.Errorf("ethereum: eth_subscribe result is not a subscription id: %.100s", result)
	}
	keys[0] = string(s)
	return nil
}

func (dialect) Classify(frame []byte, f *protocol.Frame) error {
	err := classify(frame, f)
	if err == nil && f.WantTime && f.Kind == protocol.KindNotification {
		f.Time = venueTime(f.Data)
	}
	return err
}

// classify is Classify but for the venue's stamp.
func classify(frame []byte, f *protocol.Frame) error {
	f.Reset()
	i := jsonscan.SkipSpace(frame, 0)
	if i < len(frame) && frame[i] == '[' {
		f.Kind = protocol.KindBatch
		f.Data = frame
		return nil
	}
	if protocol.FastNotify(frame, `{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"`, `,"result":`, 2, f) {
		f.Kind = protocol.KindNotification
		return nil
	}
	var r protocol.RPCFrame
	if err := protocol.ScanRPC(frame, f, &layout, &r); err != nil || r.Method == nil {
		return err // nil for a response
	}
	if !jsonscan.StringIs(r.Method, "eth_subscription") || r.Payload == nil || !f.DecodeKey(r.Key) {
		return protocol.ErrUnrecognized
	}
	f.Kind, f.Data = protocol.KindNotification, r.Payload
	return nil
}

// layout: a notification's params carry "subscription" and "result".
var layout = protocol.RPCLayout{Key: "subscription", Payload: "result"}

func (dialect) HeartbeatReply(dst []byte, _ uint64) []byte { return dst }
func (dialect) Handshake() []protocol.Call                 { return nil }
func (dialect) Sequence([]byte) (uint64, uint64, bool)     { return 0, 0, false }

// codeThrottled is the error of a request over the rate limit: EIP-1474's -32005 "limit exceeded".
const codeThrottled = -32005

// ClassifyError tells a request refused for the pace of requests, not
// for what it asks (the client sends it again later); a batch over the
// node's cap (batchTooLarge); a call over a batch's response budget; a
// log query over a provider's cap (tooMuch).
func (dialect) ClassifyError(code int, message string) protocol.ErrorClass {
	return protocol.ErrorClass{
		Throttled:        code == codeThrottled,
		BatchTooLarge:    batchTooLarge(code, message),
		ResponseTooLarge: code == codeResponseTooLarge,
		RangeTooLarge:    tooMuch(code, message),
	}
}
