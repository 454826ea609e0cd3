package sidecar

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/wsfan/wsfan/pkg/protocol"
)

// wireNames are the dialects a sidecar speaks to local clients.
var wireNames = []string{"thalex", "deribit", "ethereum", "ethereal"}

// FuzzLocalFrame: whatever a local client sends, each dialect's server
// half reads it without panicking, a refusal says why, and every answer
// the sidecar would build from what was read (an error, a result, a
// subscribe acknowledgement for the topics read) is valid JSON carrying
// the request's id as read: nothing a client sends can make the sidecar
// write a broken frame.
func FuzzLocalFrame(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"public/subscribe","params":{"channels":["ticker.BTC-PERPETUAL.raw"]}}`,
		`{"id":"a\"b","method":"public/unsubscribe","params":{"channels":["a","b"]}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"eth_subscribe","params":["newHeads"]},{"jsonrpc":"2.0","id":2,"method":"eth_unsubscribe","params":["0x1"]}]`,
		`{"jsonrpc":"2.0","id":3,"method":"eth_subscribe","params":["logs",{"address":"0x1"}]}`,
		`{"jsonrpc":"2.0","id":4,"method":"public/set_heartbeat","params":{"interval":10}}`,
		`{"event":"subscribe","data":{"type":"L2Book","symbol":"BTCUSD"}}`,
		`{"jsonrpc":"2.0","id":null,"method":"public/time"}`,
		`[]`, `[1,2]`, `{`, `null`, `"x"`, `{"id":1e999,"method":"x"}`, "{\"id\":1,\"method\":\"public/subscribe\",\"params\":{\"channels\":[\"\xff\"]}}",
	} {
		f.Add([]byte(s))
	}
	wires := make([]protocol.Server, len(wireNames))
	for i, name := range wireNames {
		w, err := protocol.ServerByName(name)
		if err != nil {
			f.Fatal(err)
		}
		wires[i] = w
	}
	f.Fuzz(func(t *testing.T, frame []byte) {
		for _, w := range wires {
			reqs, batch, ferr := w.ParseFrame(nil, frame)
			if ferr != nil {
				if ferr.Message == "" {
					t.Fatalf("%s: a refusal without a message: %q", w.Name(), frame)
				}
				if w.RPC() {
					mustBeJSON(t, w, frame, w.AppendError(nil, nil, ferr.Code, ferr.Message, nil))
				}
				continue
			}
			if !batch && len(reqs) > 1 {
				t.Fatalf("%s: %d requests from one that is not a batch: %q", w.Name(), len(reqs), frame)
			}
			for _, req := range reqs {
				if req.ID != nil && !json.Valid(req.ID) {
					t.Fatalf("%s: id %q is not JSON: %q", w.Name(), req.ID, frame)
				}
				if req.Params != nil && !json.Valid(req.Params) {
					t.Fatalf("%s: params %q are not JSON: %q", w.Name(), req.Params, frame)
				}
				if !w.RPC() {
					continue
				}
				if req.Err != nil {
					mustBeJSON(t, w, frame, w.AppendError(nil, req.ID, req.Err.Code, req.Err.Message, nil))
					continue
				}
				mustBeJSON(t, w, frame, w.AppendResult(nil, req.ID, []byte(`"ok"`)))
				mustBeJSON(t, w, frame, w.AppendError(nil, req.ID, codeBlocked, req.Method+" is not forwarded", nil))
				if req.Op == protocol.OpSubscribe {
					mustBeJSON(t, w, frame, w.AppendResult(nil, req.ID, w.AppendSubscribed(nil, req.Topics)))
				}
			}
		}
	})
}

// mustBeJSON fails unless out is one valid JSON value.
func mustBeJSON(t *testing.T, w protocol.Server, in, out []byte) {
	t.Helper()
	if !json.Valid(out) {
		t.Fatalf("%s: answer %q to %q is not JSON", w.Name(), out, in)
	}
}

// FuzzStreamQuery: whatever query and Last-Event-ID a stream request
// carries, the sidecar reads its topics and settings without panicking;
// a refusal names what is wrong, accepted topics are at least one, at
// most the limit, sorted and distinct, and an event id of this stream
// resumes from its sequence number.
func FuzzStreamQuery(f *testing.F) {
	for _, s := range [][2]string{
		{"topic=ticker.BTC-PERPETUAL.raw", ""},
		{"topic=a&topic=b&topic=a&event=topic", "s1-42"},
		{"topic=a&event=message&lastEventId=s1-7", ""},
		{"topic=a&event=bogus", "other-1"},
		{"event=topic", ""},
		{"topic=%zz&topic=", "s1-18446744073709551616"},
		{"topic=a;b&token=x", "s1-"},
	} {
		f.Add(s[0], s[1])
	}
	const stream, limit = "s1", 3
	srv := &Server{streamID: stream}
	f.Fuzz(func(t *testing.T, rawQuery, lastEventID string) {
		topics, err := streamTopics(rawQuery, limit)
		if err != nil {
			if !strings.Contains(err.Error(), "topic") {
				t.Fatalf("refusal of %q names no topic: %v", rawQuery, err)
			}
		} else {
			if len(topics) == 0 || len(topics) > limit {
				t.Fatalf("%d topics from %q (limit %d)", len(topics), rawQuery, limit)
			}
			for i := 1; i < len(topics); i++ {
				if topics[i-1] >= topics[i] {
					t.Fatalf("topics %q of %q are not sorted and distinct", topics, rawQuery)
				}
			}
		}

		r := &http.Request{URL: &url.URL{RawQuery: rawQuery}, Header: http.Header{}}
		if lastEventID != "" {
			r.Header.Set("Last-Event-ID", lastEventID)
		}
		_, from, err := srv.sseSettings(r)
		if err != nil {
			if !strings.Contains(err.Error(), "event=") {
				t.Fatalf("refusal of %q names no parameter: %v", rawQuery, err)
			}
			return
		}
		id := lastEventID
		if id == "" {
			q, _ := url.ParseQuery(rawQuery) // as net/http reads it, errors and all
			id = q.Get("lastEventId")
		}
		if (from != nil) != (id != "") {
			t.Fatalf("resume from %v for event id %q", from, id)
		}
		if seq, ok := strings.CutPrefix(id, stream+"-"); ok {
			if n, err := strconv.ParseUint(seq, 10, 64); err == nil && (!from.known || from.from != n) {
				t.Fatalf("event id %q resumes from %d (known %v)", id, from.from, from.known)
			}
		}
	})
}
