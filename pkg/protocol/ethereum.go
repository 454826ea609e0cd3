package protocol

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/wsfan/wsfan/internal/jsonscan"
)

// ethereum speaks the eth_subscribe pub/sub API of Ethereum nodes:
//
//	→ {"jsonrpc":"2.0","id":1,"method":"eth_subscribe","params":["newHeads"]}
//	← {"jsonrpc":"2.0","id":1,"result":"0xcd0c3e8af590364c09d0fa6a1210faf5"}
//	← {"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"0xcd0c…","result":{...}}}
//
// A topic is "newHeads" (any bare subscription name) or the whole params
// array as JSON, such as ["logs",{"address":"0x…"}]. Subscription ids are
// assigned by the node on every connection, so Topic.Key is empty and Ack
// returns the new id. Several subscribes go out as one batch array.
type ethereum struct{}

// Ethereum returns the Ethereum node dialect.
func Ethereum() Protocol { return ethereum{} }

func (ethereum) Name() string { return "ethereum" }

func (ethereum) NewTopic(name string) (*Topic, error) {
	t := &Topic{Name: name}
	switch trimmed := strings.TrimSpace(name); {
	case trimmed == "":
		return nil, fmt.Errorf("%w: empty ethereum subscription", ErrInvalidTopic)
	case trimmed[0] == '[':
		var buf bytes.Buffer
		if err := json.Compact(&buf, []byte(name)); err != nil {
			return nil, fmt.Errorf("%w: ethereum params %q: %v", ErrInvalidTopic, name, err)
		}
		var params []json.RawMessage
		if err := json.Unmarshal(buf.Bytes(), &params); err != nil || len(params) == 0 {
			return nil, fmt.Errorf("%w: ethereum params %q must be a non-empty array", ErrInvalidTopic, name)
		}
		t.sub = buf.Bytes()
	default:
		t.sub = append(AppendJSONString([]byte{'['}, name), ']')
	}
	return t, nil
}

func (ethereum) AppendRequest(dst []byte, id uint64, method string, params []byte) ([]byte, error) {
	return appendRPC(dst, id, method, params, "[]"), nil
}

func (ethereum) Subscribe(b *Batch, topics []*Topic, nextID func() uint64, chunk int) {
	encodeEthBatch(b, topics, nextID, chunk, "eth_subscribe", func(t *Topic, _ int) []byte { return t.sub })
}

func (ethereum) Unsubscribe(b *Batch, topics []*Topic, keys []string, nextID func() uint64, chunk int) {
	encodeEthBatch(b, topics, nextID, chunk, "eth_unsubscribe", func(_ *Topic, i int) []byte {
		return append(AppendJSONString([]byte{'['}, keys[i]), ']')
	})
}

// The fixed parts of one batch element.
const (
	ethRequestPrefix = `{"jsonrpc":"2.0","id":`
	ethRequestMethod = `,"method":"`
	ethRequestParams = `","params":`
)

// encodeEthBatch writes one request per topic, grouped into batch arrays
// of at most chunk requests (a single request goes out bare).
func encodeEthBatch(b *Batch, topics []*Topic, nextID func() uint64, chunk int, method string, params func(*Topic, int) []byte) {
	offset := 0
	chunks(topics, chunk, func(part []*Topic) {
		size := 2
		for i, t := range part {
			size += len(ethRequestPrefix) + 20 + len(ethRequestMethod) + len(method) + len(ethRequestParams) + len(params(t, offset+i)) + 2
		}
		m := b.message(size)
		if len(part) > 1 {
			m = append(m, '[')
		}
		for i, t := range part {
			if i > 0 {
				m = append(m, ',')
			}
			id := nextID()
			m = append(m, ethRequestPrefix...)
			m = strconv.AppendUint(m, id, 10)
			m = append(m, ethRequestMethod...)
			m = append(m, method...)
			m = append(m, ethRequestParams...)
			m = append(m, params(t, offset+i)...)
			m = append(m, '}')
			b.Requests = append(b.Requests, Request{ID: id, Topics: part[i : i+1 : i+1]})
		}
		if len(part) > 1 {
			m = append(m, ']')
		}
		offset += len(part)
		b.Messages = append(b.Messages, m)
	})
}

// Ack takes the subscription id the node assigned.
func (ethereum) Ack(req *Request, result []byte, keys []string) error {
	s, ok := jsonscan.AppendString(nil, bytes.TrimSpace(result))
	if !ok || len(s) == 0 {
		return fmt.Errorf("ethereum: eth_subscribe result is not a subscription id: %.100s", result)
	}
	keys[0] = string(s)
	return nil
}

func (ethereum) Classify(frame []byte, f *Frame) error {
	f.reset()
	i := jsonscan.SkipSpace(frame, 0)
	if i < len(frame) && frame[i] == '[' {
		f.Kind = KindBatch
		f.Data = frame
		return nil
	}
	if fastNotify(frame, `{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"`, `,"result":`, 2, f) {
		f.Kind = KindNotification
		return nil
	}
	var r rpcFrame
	if err := scanRPC(frame, f, &ethereumLayout, &r); err != nil || r.method == nil {
		return err // nil for a response
	}
	if !jsonscan.StringIs(r.method, "eth_subscription") || r.payload == nil || !f.decodeKey(r.key) {
		return ErrUnrecognized
	}
	f.Kind, f.Data = KindNotification, r.payload
	return nil
}

// ethereumLayout: a notification's params carry "subscription" and "result".
var ethereumLayout = rpcLayout{key: "subscription", payload: "result"}

func (ethereum) HeartbeatReply(dst []byte, _ uint64) []byte { return dst }
func (ethereum) Handshake() []Call                          { return nil }
func (ethereum) Sequence([]byte) (uint64, uint64, bool)     { return 0, 0, false }
