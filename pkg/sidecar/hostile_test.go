package sidecar_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/deribit"
	"github.com/wsfan/wsfan/pkg/ethereum"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/okx"
	"github.com/wsfan/wsfan/pkg/sidecar"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// What one local program controls is scaled to the frame limit, in each
// dialect that takes it: each request is answered with a refusal naming
// the reason (or its result), a bystander program keeps receiving, and
// the sidecar stays up. Timing is left to the benchmarks
// (BenchmarkHostile*); these say what the answer is.

// frameLimit is the sidecar's default limit of a local frame.
const frameLimit = 1 << 20

// hostileDialect is how one dialect names many channels in one request.
type hostileDialect struct {
	name      string
	d         exchangetest.Dialect
	bystander string                         // a topic of the dialect the test exchange serves
	channel   func(i int) string             // the i-th channel of a hostile request
	subscribe func(channels []string) string // one request naming them all
}

var hostileDialects = []hostileDialect{
	{name: "thalex", d: thalex.Name, bystander: "ticker.BTC-PERPETUAL.raw",
		channel:   func(i int) string { return fmt.Sprintf("X%06d", i) },
		subscribe: channelsRequest("public/subscribe")},
	{name: "deribit", d: deribit.Name, bystander: "ticker.BTC-PERPETUAL.raw",
		channel:   func(i int) string { return fmt.Sprintf("ticker.X%06d.raw", i) },
		subscribe: channelsRequest("public/subscribe")},
	{name: "okx", d: okx.Name, bystander: "tickers:BTC-USDT",
		channel: func(i int) string { return fmt.Sprintf("tickers:X%06d", i) },
		subscribe: func(channels []string) string {
			args := make([]string, len(channels))
			for i, c := range channels {
				ch, inst, _ := strings.Cut(c, ":")
				args[i] = fmt.Sprintf(`{"channel":%q,"instId":%q}`, ch, inst)
			}
			return `{"id":"1","op":"subscribe","args":[` + strings.Join(args, ",") + `]}`
		}},
}

func channelsRequest(method string) func([]string) string {
	return func(channels []string) string {
		quoted, _ := json.Marshal(channels)
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":%q,"params":{"channels":%s}}`, method, quoted)
	}
}

// largest returns the most channels of hd whose request fits in limit
// bytes, up to 100,000, and the request.
func (hd hostileDialect) largest(limit int) (int, string) {
	n := 100_000
	for {
		channels := make([]string, n)
		for i := range channels {
			channels[i] = hd.channel(i)
		}
		if req := hd.subscribe(channels); len(req) <= limit {
			return n, req
		}
		n = n * 9 / 10
	}
}

// bystander is a local client subscribed to topic on r, to show that
// one program's requests hurt no other.
type bystander struct {
	r     *rig
	ws    *websocket.Conn
	topic string
}

func newBystander(t *testing.T, r *rig, hd hostileDialect) *bystander {
	t.Helper()
	ws := r.dial(t)
	testutil.Send(t, ws, hd.subscribe([]string{hd.bystander}))
	testutil.Recv(t, ws) // the acknowledgement
	r.waitClients(t, 1, 1)
	return &bystander{r: r, ws: ws, topic: hd.bystander}
}

// receives publishes a message on its topic and waits for it.
func (b *bystander) receives(t *testing.T) {
	t.Helper()
	mark := fmt.Sprintf(`{"mark":%d}`, time.Now().UnixNano())
	require.Positive(t, b.r.up.Publish(b.topic, []byte(mark)))
	_ = b.ws.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		_, data, err := b.ws.ReadMessage()
		require.NoError(t, err, "the bystander was cut off")
		if bytes.Contains(data, []byte(mark[1:len(mark)-1])) {
			return
		}
	}
}

// closeOf reads what ws is sent until the sidecar closes it, and
// returns the close frame.
func closeOf(t *testing.T, ws *websocket.Conn) *websocket.CloseError {
	t.Helper()
	_ = ws.SetReadDeadline(time.Now().Add(20 * time.Second))
	for {
		if _, _, err := ws.ReadMessage(); err != nil {
			var ce *websocket.CloseError
			require.ErrorAs(t, err, &ce, "the sidecar did not close the client with a reason")
			return ce
		}
	}
}

// A subscribe naming as many channels as a frame holds is refused for
// the per-client limit, counted before any name is checked (the names'
// check was quadratic: 100,000 Thalex channels took 31 s of a core).
func TestHugeSubscribeRefusedAtTheLimit(t *testing.T) {
	for _, hd := range hostileDialects {
		t.Run(hd.name, func(t *testing.T) {
			r := newRig(t, hd.d, nil)
			by := newBystander(t, r, hd)
			n, req := hd.largest(frameLimit)
			require.Greater(t, n, 10_000)

			ws := r.dial(t)
			testutil.Send(t, ws, req)
			ce := closeOf(t, ws)
			assert.Equal(t, websocket.ClosePolicyViolation, ce.Code)
			assert.Equal(t, "too many topics: the limit is 1000 per client", ce.Text)
			by.receives(t)
			assert.Len(t, r.sc.Status().Topics, 1, "nothing of the refused request is held")
			assert.Equal(t, 1.0, refusalsCounted(t, r, "too_many_topics"))
		})
	}
}

// A subscribe of as many unknown channels as a frame holds, with a
// per-client limit that lets every name be checked, is answered with a
// refusal of bounded size naming the reason (each refusal was joined
// into an error as long as the request, and built in quadratic time).
func TestHugeUnknownSubscribeAnsweredBriefly(t *testing.T) {
	for _, hd := range hostileDialects[:2] { // OKX answers each topic in a frame of its own: bounded by the queue
		t.Run(hd.name, func(t *testing.T) {
			r := newRig(t, hd.d, func(c *sidecar.Config) {
				c.Topics = []string{hd.bystander}
				c.MaxTopicsPerClient = 1 << 20
			})
			by := newBystander(t, r, hd)
			n, req := hd.largest(frameLimit)

			ws := r.dial(t)
			testutil.Send(t, ws, req)
			answer := testutil.Recv(t, ws)
			assert.Less(t, len(answer), 4096, "the refusal is bounded: %.300s", answer)
			assert.Contains(t, answer, "unknown topic")
			assert.Contains(t, answer, fmt.Sprintf("and %d more topics refused", n-3))
			by.receives(t)
			testutil.Send(t, ws, hd.subscribe([]string{hd.bystander}))
			assert.Contains(t, testutil.Recv(t, ws), hd.bystander, "the client is served after it")
		})
	}
}

// A batch is held to -max-batch before any of it is parsed: one error
// naming the limit, for 1,001 requests as for 500,000 bare numbers (whose
// 32 MB answer array was built and queued whole).
func TestBatchPastTheLimitIsOneError(t *testing.T) {
	for _, d := range []exchangetest.Dialect{thalex.Name, ethereum.Name} { // the dialects that take batches
		t.Run(d.String(), func(t *testing.T) {
			r := newRig(t, d, nil)
			ws := r.dial(t)
			for _, batch := range []string{batchOf(1001, `{"jsonrpc":"2.0","id":%d,"method":"eth_blockNumber"}`), batchOf(500_000, "1")} {
				require.LessOrEqual(t, len(batch), frameLimit)
				testutil.Send(t, ws, batch)
				resp := testutil.RecvJSON(t, ws)
				e, _ := resp["error"].(map[string]any)
				require.NotNil(t, e, "%v", resp)
				assert.EqualValues(t, -32600, e["code"])
				assert.Contains(t, e["message"], "at most 1000 in one batch (-max-batch)")
			}
			assert.Equal(t, 2.0, refusalsCounted(t, r, "batch_too_large"))
			if d == thalex.Name {
				newBystander(t, r, hostileDialects[0]).receives(t)
			}
		})
	}
}

// An unsubscribe naming as many channels as a frame holds, none of them
// held, is answered (with what was removed: nothing) and costs a look-up
// each.
func TestHugeUnsubscribeAnswered(t *testing.T) {
	for _, hd := range hostileDialects[:2] {
		t.Run(hd.name, func(t *testing.T) {
			r := newRig(t, hd.d, nil)
			by := newBystander(t, r, hd)
			n, req := hd.largest(frameLimit)
			req = strings.Replace(req, `"public/subscribe"`, `"public/unsubscribe"`, 1)
			if hd.d == thalex.Name {
				req = strings.Replace(req, `"public/unsubscribe"`, `"unsubscribe"`, 1)
			}
			require.Greater(t, n, 10_000)
			ws := r.dial(t)
			testutil.Send(t, ws, req)
			resp := testutil.RecvJSON(t, ws)
			assert.Equal(t, []any{}, resp["result"], "%.300v", resp)
			by.receives(t)
		})
	}
}

// batchOf is a JSON array of n elements, each elem formatted with its
// index when it has a verb.
func batchOf(n int, elem string) string {
	var b strings.Builder
	b.WriteByte('[')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		if strings.Contains(elem, "%") {
			fmt.Fprintf(&b, elem, i)
		} else {
			b.WriteString(elem)
		}
	}
	b.WriteByte(']')
	return b.String()
}

// A batch's subscribes are held to the per-client limit exactly as the
// same requests one by one: 1,100 one-channel subscribes hold at most
// 1,000 topics (each was checked against the topics held before the
// batch, and one batch took the sidecar's whole -max-topics).
func TestBatchOfSubscribesHeldToTheLimit(t *testing.T) {
	r := newRig(t, thalex.Name, func(c *sidecar.Config) { c.MaxBatch = 2000 })
	by := newBystander(t, r, hostileDialects[0])
	ws := r.dial(t)
	testutil.Send(t, ws, batchOf(1100, `{"jsonrpc":"2.0","id":%[1]d,"method":"public/subscribe","params":{"channels":["X%06[1]d"]}}`))
	ce := closeOf(t, ws)
	assert.Equal(t, "too many topics: the limit is 1000 per client", ce.Text)
	held := len(r.sc.Status().Topics)
	assert.LessOrEqual(t, held, 1001, "the bystander's topic and at most 1,000 of the batch's")
	by.receives(t)
}

// A batch's subscribes go upstream together and its answer is one array
// in request order; an unsubscribe in it meets the subscribes before it
// answered, as it would one by one.
func TestBatchAnswersInOrder(t *testing.T) {
	r := newRig(t, thalex.Name, nil)
	ws := r.dial(t)
	testutil.Send(t, ws, `[{"jsonrpc":"2.0","id":1,"method":"public/subscribe","params":{"channels":["a.b"]}},`+
		`{"jsonrpc":"2.0","id":2,"method":"public/subscribe","params":{"channels":["c.d"]}},`+
		`{"jsonrpc":"2.0","id":3,"method":"unsubscribe","params":{"channels":["a.b"]}},`+
		`{"jsonrpc":"2.0","id":4,"method":"public/subscribe","params":{"channels":["e.f"]}}]`)
	var answers []struct {
		ID     int `json:"id"`
		Result any `json:"result"`
	}
	require.NoError(t, json.Unmarshal([]byte(testutil.Recv(t, ws)), &answers))
	require.Len(t, answers, 4)
	for i, a := range answers {
		assert.Equal(t, i+1, a.ID)
	}
	assert.Equal(t, []any{"a.b"}, answers[2].Result, "the unsubscribe found the topic the batch subscribed")
	r.waitClients(t, 1, 2) // c.d and e.f

	before := r.up.CountReceived("public/subscribe")
	testutil.Send(t, ws, batchOf(100, `{"jsonrpc":"2.0","id":%[1]d,"method":"public/subscribe","params":{"channels":["X%06[1]d"]}}`))
	testutil.Recv(t, ws)
	// A round goes at once and those reserved within 10 ms of it are
	// gathered behind it: a loaded machine may spread the batch's
	// reserves over a few windows, never over one request each.
	assert.Less(t, r.up.CountReceived("public/subscribe")-before, 10,
		"a batch's 100 subscribes go upstream together, not one request each")
}

// No answer passes the client's queue: a batch whose answers would is
// never built whole, and the client is closed with 1009 and the reason.
func TestAnswerLargerThanTheQueueCloses1009(t *testing.T) {
	r := newRig(t, thalex.Name, func(c *sidecar.Config) { c.QueueBytes = 32 << 10 })
	by := newBystander(t, r, hostileDialects[0])
	ws := r.dial(t)
	testutil.Send(t, ws, batchOf(1000, "1")) // 1,000 errors of 64 bytes
	ce := closeOf(t, ws)
	assert.Equal(t, websocket.CloseMessageTooBig, ce.Code)
	assert.Contains(t, ce.Text, "exceeds the 32768-byte queue")
	by.receives(t)
}

// Five clients sending 1 MB batches and never reading leave the
// sidecar's live heap within their queues' bounds, and it returns once
// they have gone (each frame made a 32 MB answer, 130 MB of RSS, and 2
// GB stayed live after they left).
func TestNonReadingBatchersDoNotGrowTheHeap(t *testing.T) {
	r := newRig(t, thalex.Name, nil)
	by := newBystander(t, r, hostileDialects[0])
	before := liveHeap()
	batch := []byte(batchOf(500_000, "1"))
	var clients []*websocket.Conn
	for range 5 {
		d := websocket.Dialer{ReadBufferSize: 1024}
		ws, resp, err := d.Dial(r.wsURL(), nil)
		require.NoError(t, err)
		_ = resp.Body.Close()
		clients = append(clients, ws)
	}
	var wg sync.WaitGroup
	for _, ws := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				_ = ws.SetWriteDeadline(time.Now().Add(5 * time.Second))
				if ws.WriteMessage(websocket.TextMessage, batch) != nil {
					return // closed as a slow consumer: fine
				}
			}
		}()
	}
	wg.Wait()
	const queues = 5 * (4<<20 + frameLimit) // each client's queue and a frame being read
	during := liveHeap()
	assert.Less(t, int64(during)-int64(before), int64(queues+16<<20), "live heap grew by %d bytes", during-before)
	by.receives(t)
	for _, ws := range clients {
		_ = ws.Close()
	}
	r.waitClients(t, 1, 1)
	bound := before + max(before/10, 2<<20)
	deadline := time.Now().Add(10 * time.Second)
	after := liveHeap()
	for after > bound && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
		after = liveHeap()
	}
	assert.LessOrEqual(t, after, bound, "live heap %d bytes after the clients left, %d before", after, before)
}

func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// A refused request is one log line, of bounded size, however many topics
// it names (10,000 unknown channels wrote 3.6 MB); a client's refusals
// are logged at most once a second, the rest counted; 1,000 channels the
// upstream refuses are one line, not one each.
func TestRefusalLogsAreBounded(t *testing.T) {
	var logged countingWriter
	logger := zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), &logged, zap.InfoLevel))
	r := newRig(t, thalex.Name, func(c *sidecar.Config) {
		c.MaxTopicsPerClient = 1 << 20
		c.Logger = logger
	}, exchangetest.WithTopics("ticker.BTC-PERPETUAL.raw"))
	ws := r.dial(t)
	hd := hostileDialects[0]
	channels := make([]string, 10_000)
	for i := range channels {
		channels[i] = "bad name " + hd.channel(i) // not a Thalex channel
	}
	logged.reset()
	testutil.Send(t, ws, hd.subscribe(channels))
	assert.Contains(t, testutil.Recv(t, ws), "and 9997 more topics refused")
	lines, size := logged.count()
	assert.Equal(t, 1, lines)
	assert.Less(t, size, 4096, "bytes logged for one refused request of 10,000 names")

	logged.reset()
	start := time.Now()
	for range 10 {
		testutil.Send(t, ws, hd.subscribe(channels[:10]))
		testutil.Recv(t, ws)
	}
	lines, _ = logged.count()
	assert.LessOrEqual(t, lines, 1+int(time.Since(start)/time.Second), "one line a second for one client")
	assert.Positive(t, suppressedCounted(t, r))

	logged.reset()
	upstreamRefused := make([]string, 1000)
	for i := range upstreamRefused {
		upstreamRefused[i] = hd.channel(i) // a Thalex channel the exchange does not serve
	}
	testutil.Send(t, ws, hd.subscribe(upstreamRefused))
	testutil.Recv(t, ws)
	lines, _ = logged.count()
	assert.LessOrEqual(t, lines, 3, "the upstream's refusal of 1,000 channels: a line a round and the client's")
}

// countingWriter counts the lines and bytes a logger writes.
type countingWriter struct {
	mu           sync.Mutex
	lines, bytes int
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.lines += bytes.Count(p, []byte{'\n'})
	w.bytes += len(p)
	return len(p), nil
}

func (w *countingWriter) Sync() error { return nil }

func (w *countingWriter) reset() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.lines, w.bytes = 0, 0
}

func (w *countingWriter) count() (lines, bytes int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.lines, w.bytes
}

// A client that leaves while its subscribe waits for the upstream is
// logged as having left, not as an upstream that did not answer.
func TestClientLeavingMidSubscribeIsNotBlamedOnTheUpstream(t *testing.T) {
	core, logs := observer.New(zap.DebugLevel)
	r := newRig(t, thalex.Name, func(c *sidecar.Config) { c.Logger = zap.New(core) })
	r.up.SetResponseDelay(time.Second)
	ws := r.dial(t)
	testutil.Send(t, ws, hostileDialects[0].subscribe([]string{"a.b"}))
	r.waitClients(t, 1, 0)
	require.NoError(t, ws.Close())
	waitFor(t, "the leaving logged", func() bool {
		return logs.FilterMessage("local client left before its subscribe was answered").Len() == 1
	})
	assert.Zero(t, logs.FilterMessage("subscribe refused").Len())
	assert.Equal(t, 1.0, refusalsCounted(t, r, "client_left"))
}

// eth_unsubscribe of many ids costs a look-up each (it walked the
// client's topics for each id): a batch unsubscribing the 1,000 ids a
// client holds, each beside one it does not, is answered in order.
func TestEthUnsubscribeBatch(t *testing.T) {
	r := newRig(t, ethereum.Name, func(c *sidecar.Config) { c.MaxBatch = 2000 })
	ws := r.dial(t)
	testutil.Send(t, ws, batchOf(1000, `{"jsonrpc":"2.0","id":%d,"method":"eth_subscribe","params":["newHeads"]}`))
	var subs []struct {
		ID     int    `json:"id"`
		Result string `json:"result"`
	}
	require.NoError(t, json.Unmarshal([]byte(testutil.Recv(t, ws)), &subs))
	require.Len(t, subs, 1000)
	ids := map[string]bool{}
	for _, s := range subs {
		ids[s.Result] = true
	}
	require.Len(t, ids, 1000, "each eth_subscribe gets an id of its own (twins)")
	r.waitClients(t, 1, 1000)

	var b strings.Builder
	b.WriteByte('[')
	for i, s := range subs {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"method":"eth_unsubscribe","params":[%q]},`, 2*i, s.Result)
		fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"method":"eth_unsubscribe","params":["0x%x"]}`, 2*i+1, i)
	}
	b.WriteByte(']')
	testutil.Send(t, ws, b.String())
	var unsubs []struct {
		ID     int             `json:"id"`
		Result bool            `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	require.NoError(t, json.Unmarshal([]byte(testutil.Recv(t, ws)), &unsubs))
	require.Len(t, unsubs, 2000)
	for i, u := range unsubs {
		require.Equal(t, i, u.ID)
		if i%2 == 0 {
			assert.True(t, u.Result, "%d", i)
		} else {
			assert.NotEmpty(t, u.Error, "%d: an id the client does not hold", i)
		}
	}
	r.waitClients(t, 1, 0)
}

// An SSE stream naming as many topics as a request line holds is refused
// for the per-client limit (400), and one naming as many unknown topics
// with a limit that lets each be checked is refused briefly (404).
func TestHugeStreamQueryRefused(t *testing.T) {
	r := newRig(t, thalex.Name, nil)
	by := newBystander(t, r, hostileDialects[0])
	q := url.Values{}
	for i := range 50_000 {
		q.Add("topic", fmt.Sprintf("X%06d", i))
	}
	status, body := httpGet(t, r.url+"/v1/stream?"+q.Encode())
	assert.Equal(t, 400, status, "%.300s", body)
	assert.Contains(t, body, "the limit is 1000 per client")
	assert.Less(t, len(body), 4096)
	by.receives(t)
}

// refusalsCounted reads wsfan_sidecar_refusals_total{reason} from
// /metrics.
func refusalsCounted(t *testing.T, r *rig, reason string) float64 {
	t.Helper()
	return metricValue(t, r, fmt.Sprintf(`wsfan_sidecar_refusals_total{reason=%q}`, reason))
}

// suppressedCounted reads wsfan_sidecar_refusal_logs_suppressed_total.
func suppressedCounted(t *testing.T, r *rig) float64 {
	t.Helper()
	return metricValue(t, r, "wsfan_sidecar_refusal_logs_suppressed_total")
}

func metricValue(t *testing.T, r *rig, series string) float64 {
	t.Helper()
	_, body := httpGet(t, r.url+"/metrics")
	for _, line := range strings.Split(body, "\n") {
		if rest, ok := strings.CutPrefix(line, series+" "); ok {
			var v float64
			_, err := fmt.Sscan(rest, &v)
			require.NoError(t, err)
			return v
		}
	}
	t.Fatalf("no %s in /metrics", series)
	return 0
}

// A topic the upstream refused is refused by the sidecar itself for a
// while, with the upstream's reason: a program asking for it again (or
// another program) costs the shared connection's request budget nothing
// more; a book request for it is refused too.
func TestUpstreamRefusalIsRemembered(t *testing.T) {
	r := newRig(t, thalex.Name, nil, exchangetest.WithTopics("ticker.BTC-PERPETUAL.raw"))
	hd := hostileDialects[0]
	ws := r.dial(t)
	for range 3 {
		testutil.Send(t, ws, hd.subscribe([]string{"book.NOPE.none.10.100ms"}))
		resp := testutil.RecvJSON(t, ws)
		require.NotNil(t, resp["error"], "%v", resp)
	}
	other := r.dial(t)
	testutil.Send(t, other, hd.subscribe([]string{"book.NOPE.none.10.100ms"}))
	assert.Contains(t, fmt.Sprint(testutil.RecvJSON(t, other)["error"]), "not asked again")
	status, body := httpGet(t, r.url+"/v1/book?topic=book.NOPE.none.10.100ms")
	assert.Equal(t, 502, status, body)
	assert.Equal(t, 1, r.up.CountSubscribes("book.NOPE.none.10.100ms"), "the upstream was asked once")
}
