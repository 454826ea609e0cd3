package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/wsfan/wsfan/internal/batchconn"
)

// The node server is the peer of the echo and blast benchmarks: one
// handler that the benchmarks run either in their own process or in a
// child process (server=inproc, server=process), so the two modes differ
// only in where the server runs.
//
//	/echo        answers bench_payload ["small"] with Payload(100)
//	/blast?n=N   answers eth_subscribe ["newHeads"], then writes N
//	             newHeads notifications as fast as the socket takes them
//
// Every request is decoded with encoding/json and every answer encoded
// with it, as a node does (go-ethereum's server decodes the envelope, then
// the params into typed arguments), so the server costs what a real one
// costs per call rather than only slicing the id. Each connection is
// served by one goroutine that reads a request and writes its answer
// (a blast's by two: one reads, answering pings, while the other writes).
func nodeHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/echo", serveEcho)
	mux.HandleFunc("/blast", serveBlast)
	return mux
}

// nodeRequest is a JSON-RPC request as a node decodes it.
type nodeRequest struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
}

// nodeResponse is a node's answer: a result or an error.
type nodeResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *nodeError      `json:"error,omitempty"`
}

type nodeError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// blastSubscription is the subscription id the blast server hands out.
const blastSubscription = "0xcd0c3e8af590364c09d0fa6a1210faf5"

var (
	// echoResult is bench_payload's answer.
	echoResult = json.RawMessage(Payload(PayloadSizes[0].Size))
	// blastFrame is one notification of the blast, built once.
	blastFrame = []byte(`{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"` +
		blastSubscription + `","result":` + string(NewHeads) + `}}`)
)

// chainFrame appends to dst the i-th head of a chain: number 0x1406f40+i,
// its parent the (i-1)-th's hash, framed as blastFrame is and of its size.
func chainFrame(dst []byte, i int) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"`+blastSubscription+`","result":{"parentHash":"`...)
	dst = fmt.Appendf(dst, "0x%064x", i)
	dst = append(dst, `","miner":"`+address(2)+`","stateRoot":"`+hash(3)+`","transactionsRoot":"`+hash(4)+`","number":"`...)
	dst = fmt.Appendf(dst, "0x%x", 0x1406f40+i)
	dst = append(dst, `","gasLimit":"0x1c9c380","gasUsed":"0xe4e1c0","timestamp":"0x6789a3c0","baseFeePerGas":"0x3b9aca00","hash":"`...)
	dst = fmt.Appendf(dst, "0x%064x", i+1)
	return append(dst, `"}}}`...)
}

// blastBurst is how many notifications the blast server writes per
// write(2).
const blastBurst = 64

// answer decodes one request and encodes the answer to it: bench_payload
// ["small"] gets echoResult, eth_subscribe ["newHeads"] the blast
// subscription id, eth_unsubscribe true, anything else an error.
func answer(req []byte) ([]byte, string) {
	var m nodeRequest
	if err := json.Unmarshal(req, &m); err != nil {
		return nil, ""
	}
	res := nodeResponse{JSONRPC: "2.0", ID: m.ID}
	var args []string
	if err := json.Unmarshal(m.Params, &args); err != nil || len(args) == 0 {
		res.Error = &nodeError{Code: -32602, Message: "want [string, ...] params"}
	} else {
		switch {
		case m.Method == "bench_payload" && args[0] == "small":
			res.Result = echoResult
		case m.Method == "eth_subscribe" && args[0] == "newHeads":
			res.Result = json.RawMessage(`"` + blastSubscription + `"`)
		case m.Method == "eth_unsubscribe":
			res.Result = json.RawMessage(`true`)
		default:
			res.Error = &nodeError{Code: -32601, Message: "unknown method " + m.Method}
		}
	}
	out, err := json.Marshal(&res)
	if err != nil {
		return nil, ""
	}
	return out, m.Method
}

// serveEcho answers every request of the connection in order.
func serveEcho(w http.ResponseWriter, r *http.Request) {
	ws, err := (&websocket.Upgrader{}).Upgrade(w, r, nil)
	if err != nil {
		return
	}
	defer ws.Close()
	for {
		_, req, err := ws.ReadMessage()
		if err != nil {
			return
		}
		out, _ := answer(req)
		if out == nil || ws.WriteMessage(websocket.TextMessage, out) != nil {
			return
		}
	}
}

// serveBlast answers requests like serveEcho; after the answer to the
// first eth_subscribe it writes n notifications (the query's n) in bursts
// of blastBurst frames per write(2), then goes on answering. With
// chain=1 the heads are a chain, each its own (chainFrame), the same on
// every connection: what the legs of a hot standby read. With every=D
// (a Go duration) one head goes out every D, a steady feed.
func serveBlast(w http.ResponseWriter, r *http.Request) {
	n, err := strconv.Atoi(r.URL.Query().Get("n"))
	if err != nil || n < 0 {
		http.Error(w, "want /blast?n=N", http.StatusBadRequest)
		return
	}
	chain := r.URL.Query().Get("chain") == "1"
	every, _ := time.ParseDuration(r.URL.Query().Get("every")) // 0: as fast as the socket takes them
	hj := &batchconn.Hijacker{ResponseWriter: w}
	ws, err := (&websocket.Upgrader{}).Upgrade(hj, r, nil)
	if err != nil {
		return
	}
	defer ws.Close()
	fc := hj.Hijacked()
	// The requests are read on a goroutine of their own, so that a ping
	// sent during the blast is answered (gorilla's ping handler writes the
	// pong from the reading goroutine, WriteControl being safe beside
	// WriteMessage) as a node answers it: a server that read nothing
	// while it blasted had a client at feed=20k give the link up as dead
	// after its pong timeout, reconnect and subscribe again, and a fresh
	// blast of the chain from its start, 2 a run, in every cell.
	reqs, done := make(chan []byte), make(chan struct{})
	defer close(done) // before ws.Close: the reader, blocked on reqs, leaves
	go func() {
		defer close(reqs)
		for {
			_, req, err := ws.ReadMessage()
			if err != nil {
				return
			}
			select {
			case reqs <- req:
			case <-done:
				return
			}
		}
	}()
	blasted := false
	for req := range reqs {
		out, method := answer(req)
		if out == nil || ws.WriteMessage(websocket.TextMessage, out) != nil {
			return
		}
		if method != "eth_subscribe" || blasted {
			continue
		}
		blasted = true
		frame := blastFrame
		var chained []byte // this connection's own: blastFrame is every connection's
		burst := blastBurst
		if every > 0 {
			burst = 1
		}
		next := time.Now()
		for sent := 0; sent < n; {
			if every > 0 {
				next = next.Add(every)
				time.Sleep(time.Until(next))
			}
			fc.Cork()
			for end := min(n, sent+burst); sent < end; sent++ {
				if chain {
					chained = chainFrame(chained[:0], sent)
					frame = chained
				}
				if ws.WriteMessage(websocket.TextMessage, frame) != nil {
					_ = fc.Flush()
					return
				}
			}
			if fc.Flush() != nil {
				return
			}
		}
	}
}

// TestNodeServer checks, in both modes, that the node server answers
// calls, refuses unknown methods and blasts exactly the notifications
// asked for after the subscription's answer.
func TestNodeServer(t *testing.T) {
	for _, srv := range nodeServers {
		t.Run("server="+srv.name, func(t *testing.T) {
			node := srv.start(t)
			ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
			defer cancel()

			echo, _, err := websocket.DefaultDialer.DialContext(ctx, node.base+"/echo", nil)
			if err != nil {
				t.Fatal(err)
			}
			defer echo.Close()
			for _, c := range []struct{ req, want string }{
				{`{"jsonrpc":"2.0","id":7,"method":"bench_payload","params":["small"]}`, `{"jsonrpc":"2.0","id":7,"result":` + string(echoResult) + `}`},
				{`{"jsonrpc":"2.0","id":"a","method":"nope","params":["x"]}`, `{"jsonrpc":"2.0","id":"a","error":{"code":-32601,"message":"unknown method nope"}}`},
				{`{"jsonrpc":"2.0","id":8,"method":"bench_payload","params":{}}`, `{"jsonrpc":"2.0","id":8,"error":{"code":-32602,"message":"want [string, ...] params"}}`},
			} {
				got, err := gorillaCall(echo, []byte(c.req))
				if err != nil {
					t.Fatal(err)
				}
				if string(got) != c.want {
					t.Errorf("%s:\n got %s\nwant %s", c.req, got, c.want)
				}
			}

			const n = 3*blastBurst + 5
			blast, _, err := websocket.DefaultDialer.DialContext(ctx, blastURL(node.base, n), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer blast.Close()
			ack, err := gorillaCall(blast, ethRequest(1, "eth_subscribe", `["newHeads"]`))
			if err != nil {
				t.Fatal(err)
			}
			if want := `{"jsonrpc":"2.0","id":1,"result":"` + blastSubscription + `"}`; string(ack) != want {
				t.Fatalf("subscribe answer %s, want %s", ack, want)
			}
			for i := range n {
				_, msg, err := blast.ReadMessage()
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(msg, blastFrame) {
					t.Fatalf("notification %d is %.80s...", i, msg)
				}
			}
			// The blast is over: the next frame answers the next request.
			got, err := gorillaCall(blast, ethRequest(2, "eth_unsubscribe", `["`+blastSubscription+`"]`))
			if err != nil {
				t.Fatal(err)
			}
			if want := `{"jsonrpc":"2.0","id":2,"result":true}`; string(got) != want {
				t.Errorf("unsubscribe answer %s, want %s", got, want)
			}
		})
	}
}

// TestBlastChainsEachConnection checks, in both modes, that a chained
// blast gives each connection the chain whole, every head once and in
// order, though several connections blast at once (a hot standby's
// legs), and leaves the plain blast's frame as it was. The chain was
// written into blastFrame's array, shared by every connection: one
// connection's heads were sent on another's (BenchmarkStandbyBlast's
// legs read heads out of order, which the merge took for reorgs, lost
// and delivered twice), and a plain blast after a chained one sent the
// chain's last head.
func TestBlastChainsEachConnection(t *testing.T) {
	plain := []byte(`{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"` +
		blastSubscription + `","result":` + string(NewHeads) + `}}`)
	for _, srv := range nodeServers {
		t.Run("server="+srv.name, func(t *testing.T) {
			node := srv.start(t)
			ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
			defer cancel()
			subscribe := func(url string) *websocket.Conn {
				ws, _, err := websocket.DefaultDialer.DialContext(ctx, url, nil)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = ws.Close() })
				if _, err := gorillaCall(ws, ethRequest(1, "eth_subscribe", `["newHeads"]`)); err != nil {
					t.Fatal(err)
				}
				return ws
			}
			const n, conns = 20 * blastBurst, 3
			legs := make([]*websocket.Conn, conns)
			for i := range legs {
				legs[i] = subscribe(fmt.Sprintf("%s/blast?n=%d&chain=1", node.base, n))
			}
			errs := make(chan error, conns)
			for _, ws := range legs {
				go func() {
					var want []byte
					for i := range n {
						_, msg, err := ws.ReadMessage()
						if err != nil {
							errs <- err
							return
						}
						if want = chainFrame(want[:0], i); !bytes.Equal(msg, want) {
							errs <- fmt.Errorf("head %d is %.200s", i, msg)
							return
						}
					}
					errs <- nil
				}()
			}
			for range legs {
				if err := <-errs; err != nil {
					t.Error(err)
				}
			}
			ws := subscribe(blastURL(node.base, 1))
			if _, msg, err := ws.ReadMessage(); err != nil || !bytes.Equal(msg, plain) {
				t.Errorf("the plain blast after a chained one sends %.200s (%v)", msg, err)
			}
		})
	}
}

// TestBlastAnswersPings checks, in both modes, that the blast server
// answers a ping while it blasts, as a node does: it read nothing until
// its blast was over, so a client at a steady feed gave the link up as
// dead after its pong timeout and subscribed again on a new connection,
// which the server blasted from the start (BenchmarkStandbyBlast's
// feed=20k cells: two reconnects a run).
func TestBlastAnswersPings(t *testing.T) {
	for _, srv := range nodeServers {
		t.Run("server="+srv.name, func(t *testing.T) {
			node := srv.start(t)
			ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
			defer cancel()
			const n = 2000
			ws, _, err := websocket.DefaultDialer.DialContext(ctx, fmt.Sprintf("%s/blast?n=%d&every=50us", node.base, n), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer ws.Close()
			if _, err := gorillaCall(ws, ethRequest(1, "eth_subscribe", `["newHeads"]`)); err != nil {
				t.Fatal(err)
			}
			ponged := false
			ws.SetPongHandler(func(string) error { ponged = true; return nil })
			if err := ws.WriteControl(websocket.PingMessage, nil, time.Now().Add(setupTimeout)); err != nil {
				t.Fatal(err)
			}
			for i := 0; !ponged; i++ {
				if i == n {
					t.Fatalf("no pong before the blast's %d heads ended", n)
				}
				if _, _, err := ws.ReadMessage(); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}
