// Package protocoltest is what every exchange package's tests share: the
// conformance suite (Run), which every dialect must pass, and the fuzz
// harnesses of its classifier (FuzzClassify, FuzzRoute with the dialect's
// oracle). Adding an exchange means a folder with its two halves, one
// registration (its init), and these passing:
//
//	func TestConformance(t *testing.T) { protocoltest.Run(t, suite) }
//	func FuzzClassify(f *testing.F)    { protocoltest.FuzzClassify(f, binance.Protocol()) }
//	func FuzzRoute(f *testing.F)       { protocoltest.FuzzRoute(f, binance.Protocol(), oracle) }
package protocoltest

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/pkg/protocol"
)

// Suite describes an exchange package to the conformance suite.
type Suite struct {
	// Name is the dialect's registered name.
	Name string
	// Protocol and Server return the client and the server half.
	Protocol func() protocol.Protocol
	Server   func() protocol.Server
	// Topics are at least two public topics of the dialect, as a user
	// writes them; Private is one private topic, "" when the dialect has
	// none.
	Topics  []string
	Private string
	// Payload is a notification's payload for topic as the exchange
	// sends it.
	Payload func(topic string) []byte
	// DataIsFrame is set when a notification's Data is the whole frame
	// (Ethereal), not the payload inside it.
	DataIsFrame bool
	// Method and Params are a call the exchange documents, for the
	// request round trip (RPC dialects).
	Method string
	Params []byte
	// InvalidParams is the code the server half writes for JSON-RPC's
	// invalid params (-32602), where the venue has codes of its own (OKX:
	// 60013), and NoErrorData says its errors carry no data member; 0
	// and false: JSON-RPC's.
	InvalidParams int
	NoErrorData   bool
	// ErrorText says its errors are their text alone, a frame's "error"
	// string with no code (Kraken), which the client reads as the
	// Message of an RPCError of code 0.
	ErrorText bool
}

// Run runs the conformance suite: the dialect is registered under its
// name; every frame kind goes through both halves and comes out as it
// went in (subscribe, acknowledgement, notification and its envelope,
// unsubscribe, call, error, heartbeat, reconnect notice, handshake);
// classifying a notification allocates nothing; and a restore after a
// reconnect, against pkg/exchangetest, goes out in one write.
func Run(t *testing.T, s Suite) {
	t.Helper()
	require.GreaterOrEqual(t, len(s.Topics), 2, "the suite needs two public topics")
	t.Run("registered", func(t *testing.T) { testRegistered(t, s) })
	t.Run("subscribe", func(t *testing.T) { testSubscribe(t, s) })
	t.Run("acknowledge and notify", func(t *testing.T) { testAcknowledge(t, s) })
	t.Run("unsubscribe", func(t *testing.T) { testUnsubscribe(t, s) })
	t.Run("call and error", func(t *testing.T) { testCall(t, s) })
	t.Run("heartbeat, handshake and notices", func(t *testing.T) { testHeartbeat(t, s) })
	t.Run("classify allocates nothing", func(t *testing.T) { testAllocations(t, s) })
	t.Run("restore in one write", func(t *testing.T) { testRestore(t, s) })
}

func testRegistered(t *testing.T, s Suite) {
	assert.Contains(t, protocol.Names(), s.Name)
	p, err := protocol.ByName(s.Name)
	require.NoError(t, err)
	assert.Equal(t, s.Name, p.Name())
	w, err := protocol.ServerByName(s.Name)
	require.NoError(t, err)
	assert.Equal(t, s.Name, w.Name())
	assert.Equal(t, s.Name, s.Protocol().Name())
	assert.Equal(t, s.Name, s.Server().Name())
}

// newTopics parses names with p.
func newTopics(t testing.TB, p protocol.Protocol, names []string) []*protocol.Topic {
	t.Helper()
	topics := make([]*protocol.Topic, len(names))
	for i, name := range names {
		topic, err := p.NewTopic(name)
		require.NoError(t, err, name)
		topics[i] = topic
	}
	return topics
}

// counter hands out request ids from 1.
func counter() func() uint64 {
	var id uint64
	return func() uint64 { id++; return id }
}

// allTopics is every topic of the suite, the private one included.
func (s Suite) allTopics() []string {
	if s.Private == "" {
		return s.Topics
	}
	return append(slices.Clone(s.Topics), s.Private)
}

// parseAll reads every message of b with the server half.
func parseAll(t *testing.T, w protocol.Server, b *protocol.Batch) []protocol.Incoming {
	t.Helper()
	var reqs []protocol.Incoming
	for _, m := range b.Messages {
		var err *protocol.Error
		reqs, _, err = w.ParseFrame(reqs, m)
		require.Nil(t, err, "the server refused %s", m)
	}
	return reqs
}

// idOf reads a request id the server parsed.
func idOf(t *testing.T, raw []byte) uint64 {
	t.Helper()
	if len(raw) > 2 && raw[0] == '"' { // a venue whose ids are strings of digits (OKX)
		raw = raw[1 : len(raw)-1]
	}
	id, err := strconv.ParseUint(string(raw), 10, 64)
	require.NoError(t, err, "id %s", raw)
	return id
}

// testSubscribe: what the client half subscribes, whole or in chunks of
// one, the server half reads back as the same topics, each under the id
// of the request that covers it and with the right scope.
func testSubscribe(t *testing.T, s Suite) {
	p, w := s.Protocol(), s.Server()
	topics := newTopics(t, p, s.allTopics())
	for _, chunk := range []int{0, 1} {
		var b protocol.Batch
		p.Subscribe(&b, topics, counter(), chunk)
		var covered []string
		byID := make(map[uint64][]string)
		for _, r := range b.Requests {
			for _, topic := range r.Topics {
				covered = append(covered, topic.Name)
				byID[r.ID] = append(byID[r.ID], topic.Name)
			}
		}
		assert.ElementsMatch(t, s.allTopics(), covered, "chunk %d: every topic in exactly one request", chunk)
		var read []string
		for _, req := range parseAll(t, w, &b) {
			require.Nil(t, req.Err)
			require.Equal(t, protocol.OpSubscribe, req.Op, "%s", req.Method)
			read = append(read, req.Topics...)
			if w.RPC() {
				assert.ElementsMatch(t, byID[idOf(t, req.ID)], req.Topics, "the request's id covers its topics")
			}
			for _, name := range req.Topics {
				assert.Equal(t, w.Private(name), req.Private, "%s: the scope of the method", name)
			}
		}
		assert.ElementsMatch(t, s.allTopics(), read, "chunk %d: the server reads the topics subscribed", chunk)
		if chunk == 1 && w.RPC() {
			assert.Len(t, b.Requests, len(topics), "chunks of one topic")
		}
	}
}

// keysFor is what the server half acknowledges for topics: the channels
// themselves, or a new subscription id each.
func keysFor(w protocol.Server, topics []*protocol.Topic) []string {
	keys := make([]string, len(topics))
	for i, topic := range topics {
		if keys[i] = w.SubscriptionID(); keys[i] == "" {
			keys[i] = topic.Name
		}
	}
	return keys
}

// testAcknowledge: the server's acknowledgement of each subscribe request
// gives the client the routing keys, and a notification the server writes
// under a key reaches the client with that key and its payload, alone or
// through the server's prebuilt envelope.
func testAcknowledge(t *testing.T, s Suite) {
	p, w := s.Protocol(), s.Server()
	topics := newTopics(t, p, s.Topics)
	var b protocol.Batch
	p.Subscribe(&b, topics, counter(), 0)
	routing := make(map[string]string) // topic → key
	for _, r := range b.Requests {
		keys := keysFor(w, r.Topics)
		got := make([]string, len(r.Topics))
		if ta, ok := w.(protocol.TopicAnswering); ok {
			acknowledgeEach(t, p, ta, &r, keys, got)
		} else if w.RPC() {
			frame := w.AppendResult(nil, []byte(strconv.FormatUint(r.ID, 10)), w.AppendSubscribed(nil, keys))
			var f protocol.Frame
			require.NoError(t, p.Classify(frame, &f), "%s", frame)
			require.Equal(t, protocol.KindResponse, f.Kind, "%s", frame)
			require.True(t, f.HasID)
			require.Equal(t, r.ID, f.ID)
			require.NoError(t, p.Ack(&r, f.Result, got))
		} else {
			require.NoError(t, p.Ack(&r, nil, got))
		}
		for i, topic := range r.Topics {
			want := topic.Key
			if want == "" {
				want = keys[i] // assigned by the server
			}
			assert.Equal(t, want, got[i], "%s: the acknowledged key", topic.Name)
			routing[topic.Name] = got[i]
		}
	}
	for _, topic := range topics {
		payload := s.Payload(topic.Name)
		key := routing[topic.Name]
		frame := w.AppendNotification(nil, topic.Name, key, payload)
		var f protocol.Frame
		require.NoError(t, p.Classify(frame, &f), "%s", frame)
		require.Equal(t, protocol.KindNotification, f.Kind, "%s", frame)
		assert.Equal(t, key, string(f.Key), "%s: the routing key", frame)
		if s.DataIsFrame {
			assert.Equal(t, string(frame), string(f.Data))
		} else {
			assert.JSONEq(t, string(payload), string(f.Data))
		}
		if prefix, suffix := w.Envelope(topic.Name, key); prefix != nil {
			enveloped := append(append(slices.Clone(prefix), payload...), suffix...)
			assert.Equal(t, string(frame), string(enveloped), "the envelope writes the same notification")
		}
	}
}

// testUnsubscribe: the client's unsubscribe of topics under their keys
// reads back as the keys, and the server's answer reads as a response.
func testUnsubscribe(t *testing.T, s Suite) {
	p, w := s.Protocol(), s.Server()
	topics := newTopics(t, p, s.Topics)
	keys := keysFor(w, topics)
	var b protocol.Batch
	p.Unsubscribe(&b, topics, keys, counter(), 0)
	var read []string
	for _, req := range parseAll(t, w, &b) {
		require.Nil(t, req.Err)
		require.Equal(t, protocol.OpUnsubscribe, req.Op, "%s", req.Method)
		read = append(read, req.Topics...)
		if ta, ok := w.(protocol.TopicAnswering); ok {
			n := 0
			protocol.EachMessage(ta.AppendTopicAnswers(nil, req.ID, protocol.OpUnsubscribe, req.Topics), func(frame []byte) {
				var f protocol.Frame
				require.NoError(t, p.Classify(frame, &f), "%s", frame)
				assert.Equal(t, protocol.KindResponse, f.Kind)
				assert.Equal(t, idOf(t, req.ID), f.ID)
				n++
			})
			assert.Equal(t, len(req.Topics), n, "one answer a topic")
		} else if w.RPC() {
			frame := w.AppendResult(nil, req.ID, w.AppendUnsubscribed(nil, req.Topics))
			var f protocol.Frame
			require.NoError(t, p.Classify(frame, &f), "%s", frame)
			assert.Equal(t, protocol.KindResponse, f.Kind)
			assert.Equal(t, idOf(t, req.ID), f.ID)
		}
	}
	assert.ElementsMatch(t, keys, read)
}

// testCall: a request the client writes reads back with its id, method
// and params; the server's result and its error (with a message that
// needs escaping) reach the client under that id.
func testCall(t *testing.T, s Suite) {
	p, w := s.Protocol(), s.Server()
	frame, err := p.AppendRequest(nil, 77, s.Method, s.Params)
	if !w.RPC() {
		require.ErrorIs(t, err, protocol.ErrUnsupported, "a dialect without requests refuses them")
		return
	}
	require.NoError(t, err)
	reqs, batch, perr := w.ParseFrame(nil, frame)
	require.Nil(t, perr)
	require.False(t, batch)
	require.Len(t, reqs, 1)
	assert.Equal(t, uint64(77), idOf(t, reqs[0].ID))
	assert.Equal(t, s.Method, reqs[0].Method)
	assert.JSONEq(t, string(s.Params), string(reqs[0].Params))

	var f protocol.Frame
	res := w.AppendResult(nil, reqs[0].ID, []byte(`{"ok":[1,2]}`))
	require.NoError(t, p.Classify(res, &f), "%s", res)
	assert.Equal(t, protocol.KindResponse, f.Kind)
	assert.Equal(t, uint64(77), f.ID)
	assert.JSONEq(t, `{"ok":[1,2]}`, string(f.Result))

	const message = `bad "params" \ here`
	errFrame := w.AppendError(nil, reqs[0].ID, protocol.CodeInvalidParams, message, []byte(`{"field":"x"}`))
	require.NoError(t, p.Classify(errFrame, &f), "%s", errFrame)
	assert.Equal(t, protocol.KindResponse, f.Kind)
	assert.Equal(t, uint64(77), f.ID)
	var e struct {
		Code    json.Number
		Message string
		Msg     string
		Data    json.RawMessage
		Error   any
	}
	require.NoError(t, json.Unmarshal(f.Error, &e), "%s", f.Error)
	if s.ErrorText {
		assert.Equal(t, message, e.Error, "the error's text")
		assert.Empty(t, e.Code.String(), "no code")
		return
	}
	wantCode := cmp.Or(s.InvalidParams, protocol.CodeInvalidParams)
	assert.Equal(t, strconv.Itoa(wantCode), e.Code.String())
	assert.Equal(t, message, cmp.Or(e.Message, e.Msg))
	if !s.NoErrorData {
		assert.JSONEq(t, `{"field":"x"}`, string(e.Data))
	}
}

// acknowledgeEach answers r as a TopicAnswering server does, a frame for
// each topic, and has the client half read each as the acknowledgement
// of its topic (protocol.TopicAcking), in got.
func acknowledgeEach(t *testing.T, p protocol.Protocol, ta protocol.TopicAnswering, r *protocol.Request, keys, got []string) {
	acking, ok := p.(protocol.TopicAcking)
	require.True(t, ok, "a server half that answers topic by topic needs a client half that reads them so")
	id := []byte(strconv.Quote(strconv.FormatUint(r.ID, 10)))
	n := 0
	protocol.EachMessage(ta.AppendTopicAnswers(nil, id, protocol.OpSubscribe, keys), func(frame []byte) {
		var f protocol.Frame
		require.NoError(t, p.Classify(frame, &f), "%s", frame)
		require.Equal(t, protocol.KindResponse, f.Kind, "%s", frame)
		require.True(t, f.HasID)
		require.Equal(t, r.ID, f.ID)
		i := acking.AckedTopic(r, f.Result)
		require.GreaterOrEqual(t, i, 0, "%s names a topic of the request", frame)
		got[i] = r.Topics[i].Key
		n++
	})
	assert.Equal(t, len(r.Topics), n, "one answer a topic")
	refusal := ta.AppendTopicRefusal(nil, id, keys[0], &protocol.Error{Code: protocol.CodeInvalidParams, Message: "no {0} here"})
	protocol.EachMessage(refusal, func(frame []byte) {
		var f protocol.Frame
		require.NoError(t, p.Classify(frame, &f), "%s", frame)
		require.Equal(t, protocol.KindResponse, f.Kind, "%s", frame)
		require.NotNil(t, f.Error, "%s", frame)
		i, whole := acking.RefusedTopic(r, f.Error)
		assert.False(t, whole, "%s refuses one topic", frame)
		assert.Equal(t, 0, i, "%s names its topic", frame)
	})
}

// testHeartbeat: a heartbeat the server sends is one to the client, and
// its reply reads back as one; every handshake call reads back without
// error; a reconnect notice reads as the reconnect event.
func testHeartbeat(t *testing.T, s Suite) {
	p, w := s.Protocol(), s.Server()
	if hb := w.AppendHeartbeat(nil); len(hb) > 0 {
		var f protocol.Frame
		require.NoError(t, p.Classify(hb, &f), "%s", hb)
		assert.Equal(t, protocol.KindHeartbeat, f.Kind)
		reply := p.HeartbeatReply(nil, 9)
		reqs, _, err := w.ParseFrame(nil, reply)
		require.Nil(t, err, "%s", reply)
		require.Len(t, reqs, 1)
		assert.Equal(t, protocol.OpHeartbeatReply, reqs[0].Op)
		assert.Equal(t, uint64(9), idOf(t, reqs[0].ID))
	}
	for i, call := range p.Handshake() {
		frame, err := p.AppendRequest(nil, uint64(100+i), call.Method, call.Params)
		require.NoError(t, err)
		reqs, _, perr := w.ParseFrame(nil, frame)
		require.Nil(t, perr, "%s", frame)
		require.Len(t, reqs, 1)
		assert.Nil(t, reqs[0].Err, "handshake %s", call.Method)
	}
	if notice := w.AppendReconnectNotice(nil); len(notice) > 0 {
		var f protocol.Frame
		require.NoError(t, p.Classify(notice, &f), "%s", notice)
		assert.Equal(t, protocol.KindEvent, f.Kind)
		assert.Equal(t, protocol.EventReconnect, f.Event)
	}
}

// testAllocations: the reader's hot path, classifying a notification,
// allocates nothing.
func testAllocations(t *testing.T, s Suite) {
	p, w := s.Protocol(), s.Server()
	topic := s.Topics[0]
	key := keysFor(w, newTopics(t, p, []string{topic}))[0]
	frame := w.AppendNotification(nil, topic, key, s.Payload(topic))
	var f protocol.Frame
	allocs := testing.AllocsPerRun(100, func() {
		if err := p.Classify(frame, &f); err != nil {
			panic(fmt.Sprintf("%s: %v", frame, err))
		}
	})
	assert.Zero(t, allocs, "%s", frame)
}

// SubscribeBatch is what p's Subscribe of names makes with chunk: the
// frames and requests a subscribe (or a restore) of them sends.
func SubscribeBatch(t testing.TB, p protocol.Protocol, names []string, chunk int) *protocol.Batch {
	t.Helper()
	var b protocol.Batch
	p.Subscribe(&b, newTopics(t, p, names), counter(), chunk)
	return &b
}
