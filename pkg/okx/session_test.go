package okx_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/okx"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// dial connects a client of the OKX dialect to srv.
func dial(t *testing.T, srv *exchangetest.Server, opts ...client.Option) *client.Client {
	t.Helper()
	opts = append([]client.Option{client.WithProtocol(okx.Protocol()), client.WithRequestTimeout(5 * time.Second)}, opts...)
	c, err := client.Dial(testutil.Context(t), srv.URL(), opts...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// receive waits for the next message of sub.
func receive(t *testing.T, ctx context.Context, sub *client.Subscription) client.Message {
	t.Helper()
	select {
	case m := <-sub.C():
		return m
	case <-ctx.Done():
		t.Fatal("no message")
		return client.Message{}
	}
}

// scriptedServer is a WebSocket server on loopback that answers each
// frame a client sends with answer, for frames the test exchange would
// never send; it returns its ws:// URL and stops when the test ends.
func scriptedServer(t *testing.T, answer func(ws *websocket.Conn, frame []byte)) string {
	t.Helper()
	upgrader := websocket.Upgrader{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := upgrader.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer ws.Close()
		for {
			_, frame, err := ws.ReadMessage()
			if err != nil {
				return
			}
			answer(ws, frame)
		}
	}))
	t.Cleanup(srv.Close)
	return "ws" + strings.TrimPrefix(srv.URL, "http")
}

// Three topics go out in one subscribe request; OKX acknowledges each in
// a frame of its own and refuses the unknown one with 60018 naming it:
// the two known ones are subscribed and deliver, the unknown one is
// refused with OKX's reason.
func TestSubscribeIsAnsweredTopicByTopic(t *testing.T) {
	srv := exchangetest.NewServer(okx.Name, exchangetest.WithTopics("tickers:BTC-USDT", "trades:BTC-USDT"))
	t.Cleanup(srv.Close)
	c := dial(t, srv)
	ctx := testutil.Context(t)
	subs, errs, err := c.SubscribeEach(ctx, []string{"tickers:BTC-USDT", "tickers:NOPE-USDT", "trades:BTC-USDT"})
	require.NoError(t, err)
	assert.NoError(t, errs[0])
	assert.NoError(t, errs[2])
	var refused *client.RefusedError
	require.ErrorAs(t, errs[1], &refused)
	assert.Equal(t, []string{"tickers:NOPE-USDT"}, refused.Topics)
	var rpcErr *client.RPCError
	require.ErrorAs(t, errs[1], &rpcErr)
	assert.Equal(t, okx.CodeNoSuchChannel, rpcErr.Code)
	assert.Contains(t, rpcErr.Message, "channel:tickers,instId:NOPE-USDT")
	assert.Equal(t, 1, srv.CountReceived("subscribe"), "one request for the three")

	sub := subs[2]
	srv.Publish("trades:BTC-USDT", []byte(`[{"instId":"BTC-USDT","tradeId":"1","px":"1","sz":"1","side":"buy","ts":"1","count":"1","source":"0","seqId":1}]`))
	m := receive(t, ctx, sub)
	assert.Equal(t, "trades:BTC-USDT", m.Topic)
}

// A private channel on a client without a login is refused before it
// is sent, the error pointing at okx.Login (OKX would answer 60011
// "Please log in."); with an on-connect hook that does not log in, OKX's
// 60011 refuses it, in a request of its own, so the public topic beside
// it is subscribed.
func TestPrivateChannelNeedsLogin(t *testing.T) {
	srv := exchangetest.NewServer(okx.Name)
	t.Cleanup(srv.Close)
	ctx := testutil.Context(t)
	_, err := dial(t, srv).Subscribe(ctx, []string{"tickers:BTC-USDT", "orders:instType=ANY"})
	require.ErrorIs(t, err, protocol.ErrInvalidTopic)
	assert.Contains(t, err.Error(), "okx.Login")
	assert.Zero(t, srv.CountReceived("subscribe"), "refused before it was sent")

	noLogin := func(context.Context, *client.Client) error { return nil }
	_, err = dial(t, srv, client.WithOnConnect(noLogin)).Subscribe(ctx, []string{"tickers:BTC-USDT", "orders:instType=ANY"})
	var refused *client.RefusedError
	require.ErrorAs(t, err, &refused)
	assert.Equal(t, []string{"orders:instType=ANY"}, refused.Topics)
	var rpcErr *client.RPCError
	require.ErrorAs(t, err, &rpcErr)
	assert.Equal(t, okx.CodePleaseLogIn, rpcErr.Code)
	assert.Equal(t, 2, srv.CountReceived("subscribe"), "public and private in requests of their own")
}

// Login signs every connection in before its subscriptions are
// restored: a private channel comes back after a reconnect.
func TestLoginRestoresPrivateChannels(t *testing.T) {
	srv := exchangetest.NewServer(okx.Name, exchangetest.WithLogin(okx.NewServerLogin("key-1", "s3cret", "pass")))
	t.Cleanup(srv.Close)
	c := dial(t, srv, client.WithOnConnect(okx.Login(okx.NewKey("key-1", "s3cret", "pass"))))
	ctx := testutil.Context(t)
	const orders = "orders:instType=ANY"
	sub, err := c.Subscribe(ctx, []string{orders, "tickers:BTC-USDT"})
	require.NoError(t, err)
	update := []byte(`[{"instType":"SPOT","instId":"BTC-USDT","ordId":"312269865356374016","state":"live"}]`)
	srv.Publish(orders, update)
	assert.Equal(t, orders, receive(t, ctx, sub).Topic)

	srv.DropConnections()
	require.NoError(t, srv.WaitReceived(ctx, "login", 2))
	require.NoError(t, srv.WaitSubscribers(ctx, orders, 1))
	srv.Publish(orders, update)
	m := receive(t, ctx, sub)
	assert.Equal(t, orders, m.Topic)
	assert.NotZero(t, m.Flags&client.FlagReconnected)
}

// A login the server refuses fails Dial with client.ErrLoginRefused and
// OKX's code.
func TestLoginRefused(t *testing.T) {
	srv := exchangetest.NewServer(okx.Name, exchangetest.WithLogin(okx.NewServerLogin("key-1", "s3cret", "pass")))
	t.Cleanup(srv.Close)
	for _, tc := range []struct {
		key  *okx.Key
		code int
	}{
		{okx.NewKey("key-1", "wrong", "pass"), 60007},
		{okx.NewKey("key-1", "s3cret", "nope"), 60024},
		{okx.NewKey("key-2", "s3cret", "pass"), 60005},
	} {
		_, err := client.Dial(testutil.Context(t), srv.URL(), client.WithProtocol(okx.Protocol()),
			client.WithOnConnect(okx.Login(tc.key)))
		require.ErrorIs(t, err, client.ErrLoginRefused)
		var rpcErr *client.RPCError
		require.ErrorAs(t, err, &rpcErr)
		assert.Equal(t, tc.code, rpcErr.Code, "%v", tc.key)
	}
}

// The signature is OKX's: Base64 of HMAC-SHA256(secret, timestamp +
// "GET" + "/users/self/verify"); this vector was computed independently
// with Python's hmac and base64 modules.
func TestSign(t *testing.T) {
	k := okx.NewKey("k", "22582BD0CFF14C41EDBF1AB98506286D", "p")
	assert.Equal(t, "+LdIr8lkkvhr5hoA3g9TMC0+uQJ849ftAcocA/ouu4M=", k.Sign("1538054050"))
	assert.Equal(t, "okx.Key(k)", fmt.Sprint(k))
}

// The client keeps 480 subscribe, unsubscribe and login requests an hour
// a connection by default (never more in any hour), and a request the
// server refuses as too frequent (60014) goes out again once the pace
// allows, instead of failing.
func TestRequestLimits(t *testing.T) {
	limits := okx.Protocol().Venue().Limits
	require.Len(t, limits, 2, "the requests' budget and the connections' pace")
	l := limits[0]
	assert.LessOrEqual(t, float64(l.Burst)+l.Rate*3600, 480.0, "at most 480 in any hour")
	for _, m := range []string{protocol.SubscribeMethod, protocol.UnsubscribeMethod, "login"} {
		assert.Equal(t, 1, l.Cost(m), m)
	}
	assert.Zero(t, l.Cost("order"))
	assert.Zero(t, l.Cost(protocol.ConnectMethod))
	for _, m := range []string{protocol.SubscribeMethod, "login", "order"} {
		assert.Zero(t, limits[1].Cost(m), "the connections' pace charges no request")
	}

	srv := exchangetest.NewServer(okx.Name, exchangetest.WithRateLimit(10, 1))
	t.Cleanup(srv.Close)
	c := dial(t, srv, client.WithRateLimit(client.RateLimit{Rate: 1000, Burst: 1000}))
	ctx := testutil.Context(t)
	for _, topic := range []string{"tickers:BTC-USDT", "tickers:ETH-USDT", "trades:BTC-USDT"} {
		_, err := c.Subscribe(ctx, []string{topic})
		require.NoError(t, err, "%s: a throttled request is sent again", topic)
	}
	assert.Greater(t, srv.CountReceived("subscribe"), 3, "the server refused some as too frequent")
}

// The test exchange keeps OKX's budget of 480 subscribe, unsubscribe and
// login requests a connection an hour: the 481st is refused with 60014,
// on that connection only.
func TestExchangeRefusesPastTheHourlyBudget(t *testing.T) {
	srv := exchangetest.NewServer(okx.Name)
	t.Cleanup(srv.Close)
	dialRaw := func() *websocket.Conn {
		ws, resp, err := websocket.DefaultDialer.Dial(srv.URL(), nil)
		require.NoError(t, err)
		_ = resp.Body.Close()
		t.Cleanup(func() { _ = ws.Close() })
		return ws
	}
	answer := func(ws *websocket.Conn, n int) map[string]any {
		frame := fmt.Sprintf(`{"id":"%d","op":"subscribe","args":[{"channel":"tickers","instId":"BTC-USDT"}]}`, n)
		require.NoError(t, ws.WriteMessage(websocket.TextMessage, []byte(frame)))
		require.NoError(t, ws.SetReadDeadline(time.Now().Add(5*time.Second)))
		_, got, err := ws.ReadMessage()
		require.NoError(t, err)
		var m map[string]any
		require.NoError(t, json.Unmarshal(got, &m), "%s", got)
		return m
	}
	ws := dialRaw()
	for n := 1; n <= 480; n++ {
		require.Equal(t, "subscribe", answer(ws, n)["event"], "request %d", n)
	}
	refused := answer(ws, 481)
	assert.Equal(t, "error", refused["event"])
	assert.Equal(t, "60014", refused["code"])
	assert.Equal(t, "481", refused["id"])
	assert.Equal(t, "subscribe", answer(dialRaw(), 1)["event"], "another connection has its own budget")
}

// A refusal is attributed to the topic its message spells, the whole
// spelling: "account" is not "account:ccy=BTC"; a request's own refusal
// (60014) refuses the whole request; one that spells no argument (64003),
// or one the request does not hold, names none of its topics.
func TestRefusedTopic(t *testing.T) {
	p := okx.Protocol()
	var topics []*protocol.Topic
	for _, name := range []string{"account", "account:ccy=BTC", "tickers:BTC-USDT", "tickers:BTC-USDT-SWAP"} {
		tp, err := p.NewTopic(name)
		require.NoError(t, err)
		topics = append(topics, tp)
	}
	req := &protocol.Request{ID: 1, Topics: topics}
	acking := p.Venue().TopicAcks
	for frame, want := range map[string]struct {
		i     int
		whole bool
	}{
		`{"id":"1","event":"error","code":"60018","msg":"Wrong URL or channel:account,ccy:BTC doesn't exist."}`:         {1, false},
		`{"id":"1","event":"error","code":"60018","msg":"Wrong URL or channel:account doesn't exist."}`:                 {0, false},
		`{"id":"1","event":"error","code":"60018","msg":"Wrong URL or channel:tickers,instId:BTC-USDT doesn't exist."}`: {2, false},
		`{"id":"1","event":"error","code":"60018","msg":"Wrong URL or channel:tickers,instId:BTC-USDT-SWAP doesn't"}`:   {3, false},
		`{"id":"1","event":"error","code":"60018","msg":"Wrong URL or channel:tickers,instId:ETH-USDT doesn't exist."}`: {-1, false},
		`{"id":"1","event":"error","code":"60014","msg":"Requests too frequent."}`:                                      {-1, true},
		`{"id":"1","event":"error","code":"64003","msg":"Your trading fee tier doesn't meet the requirement."}`:         {-1, false},
		`{"id":"1","event":"error","code":"60018","arg":{"channel":"tickers","instId":"BTC-USDT"},"msg":"x"}`:           {2, false},
	} {
		i, whole := acking.RefusedTopic(req, []byte(frame))
		assert.Equal(t, want.i, i, frame)
		assert.Equal(t, want.whole, whole, frame)
	}
	_, err := p.NewTopic("tickers:instId=BTC-USDT")
	assert.ErrorIs(t, err, protocol.ErrInvalidTopic, "one spelling a topic")
}

// A channel-conn-count-error ends the connection's subscriptions of its
// channel (OKX terminated them past 30 connections a channel): the
// program's subscription ends with an error naming the topic, instead of
// waiting for messages that will not come; the others go on.
func TestServerEndedChannelEndsItsSubscription(t *testing.T) {
	srv := exchangetest.NewServer(okx.Name, exchangetest.WithLogin(okx.NewServerLogin("", "s3cret", "")))
	t.Cleanup(srv.Close)
	c := dial(t, srv, client.WithOnConnect(okx.Login(okx.NewKey("key-1", "s3cret", "pass"))))
	ctx := testutil.Context(t)
	orders, err := c.Subscribe(ctx, []string{"orders:instType=ANY"})
	require.NoError(t, err)
	tickers, err := c.Subscribe(ctx, []string{"tickers:BTC-USDT"})
	require.NoError(t, err)
	srv.PublishRaw([]byte(`{"event":"channel-conn-count-error","channel":"orders","connCount":"30","connId":"a4d3ae55"}`))
	var ended error
	select {
	case ended = <-orders.Err():
	case <-ctx.Done():
		t.Fatal("the ended subscription is still open")
	}
	var refused *client.RefusedError
	require.ErrorAs(t, ended, &refused)
	assert.Equal(t, []string{"orders:instType=ANY"}, refused.Topics)
	assert.Contains(t, refused.Error(), "channel-conn-count-error")
	srv.Publish("tickers:BTC-USDT", []byte(`[{"instId":"BTC-USDT","last":"1"}]`))
	assert.Equal(t, "tickers:BTC-USDT", receive(t, ctx, tickers).Topic)
}

// A login-only book (books-l2-tbt) goes in a subscribe request of its
// own, so OKX's refusal of a tier too low (64003, which names no
// argument and here refuses its whole request, as a venue may) refuses
// only the book: the public topics asked for in the same call are
// subscribed.
func TestLoginOnlyBooksGoInARequestOfTheirOwn(t *testing.T) {
	var mu sync.Mutex
	var requests [][]string // the channels of each subscribe request
	url := scriptedServer(t, func(ws *websocket.Conn, frame []byte) {
		var req struct {
			ID   string            `json:"id"`
			Op   string            `json:"op"`
			Args []json.RawMessage `json:"args"`
		}
		if json.Unmarshal(frame, &req) != nil {
			return // "ping"
		}
		if req.Op == "login" {
			_ = ws.WriteMessage(websocket.TextMessage, []byte(`{"id":"`+req.ID+`","event":"login","code":"0","msg":"","connId":"a4d3ae55"}`))
			return
		}
		var channels []string
		for _, a := range req.Args {
			var arg struct{ Channel string }
			_ = json.Unmarshal(a, &arg)
			channels = append(channels, arg.Channel)
		}
		mu.Lock()
		requests = append(requests, channels)
		mu.Unlock()
		if slices.Contains(channels, "books-l2-tbt") {
			_ = ws.WriteMessage(websocket.TextMessage, []byte(`{"id":"`+req.ID+`","event":"error","code":"64003","msg":"Your trading fee tier doesn't meet the requirement to access this channel","connId":"a4d3ae55"}`))
			return
		}
		for _, a := range req.Args {
			_ = ws.WriteMessage(websocket.TextMessage, []byte(`{"id":"`+req.ID+`","event":"subscribe","arg":`+string(a)+`,"connId":"a4d3ae55"}`))
		}
	})
	ctx := testutil.Context(t)
	c, err := client.Dial(ctx, url, client.WithProtocol(okx.Protocol()), client.WithRequestTimeout(5*time.Second),
		client.WithOnConnect(okx.Login(okx.NewKey("key-1", "s3cret", "pass"))))
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	_, errs, err := c.SubscribeEach(ctx, []string{"tickers:ETH-USDT", "books-l2-tbt:BTC-USDT", "trades:ETH-USDT"})
	require.NoError(t, err)
	var rpcErr *client.RPCError
	require.ErrorAs(t, errs[1], &rpcErr, "the tier's refusal is the book's")
	assert.Equal(t, 64003, rpcErr.Code)
	assert.NoError(t, errs[0], "the ticker beside it is subscribed")
	assert.NoError(t, errs[2], "the trades beside it are subscribed")
	mu.Lock()
	defer mu.Unlock()
	assert.ElementsMatch(t, [][]string{{"tickers", "trades"}, {"books-l2-tbt"}}, requests)
}

// A login-only book on a client without a login is refused before it is
// sent, the error naming okx.Login; the test exchange, like OKX, refuses
// it to a connection not logged in (60011).
func TestLoginOnlyBookNeedsLogin(t *testing.T) {
	srv := exchangetest.NewServer(okx.Name)
	t.Cleanup(srv.Close)
	ctx := testutil.Context(t)
	for _, book := range []string{"books-l2-tbt:BTC-USDT", "books50-l2-tbt:BTC-USDT"} {
		_, err := dial(t, srv).Subscribe(ctx, []string{book})
		require.ErrorIs(t, err, protocol.ErrInvalidTopic, book)
		assert.Contains(t, err.Error(), "client.WithOnConnect(okx.Login(key))", book)
	}
	assert.Zero(t, srv.CountReceived("subscribe"))

	noLogin := func(context.Context, *client.Client) error { return nil }
	_, err := dial(t, srv, client.WithOnConnect(noLogin)).Subscribe(ctx, []string{"books50-l2-tbt:BTC-USDT"})
	var rpcErr *client.RPCError
	require.ErrorAs(t, err, &rpcErr)
	assert.Equal(t, okx.CodePleaseLogIn, rpcErr.Code)
}

// A subscribe of more topics than 64 KB of arguments hold ("the total
// length of multiple channels cannot exceed 64 KB") goes out in as few
// requests as fit, each under the limit, every topic in one of them.
func TestSubscribeKeepsToTheFrameLimit(t *testing.T) {
	p := okx.Protocol()
	var topics []*protocol.Topic
	for i := range 3000 {
		tp, err := p.NewTopic(fmt.Sprintf("books:INSTRUMENT-%04d-USDT-SWAP", i))
		require.NoError(t, err)
		topics = append(topics, tp)
	}
	var b protocol.Batch
	var id uint64
	p.Subscribe(&b, topics, func() uint64 { id++; return id }, 0)
	require.Greater(t, len(b.Messages), 1)
	covered := 0
	for i, m := range b.Messages {
		assert.LessOrEqual(t, len(m), 64*1024, "request %d", i)
		assert.True(t, json.Valid(m))
		covered += len(b.Requests[i].Topics)
	}
	assert.Equal(t, len(topics), covered)
	assert.Equal(t, 3, len(b.Messages), "as few as fit: 3,000 arguments of about 59 bytes, 177 KB")
}

// A login refusal that quotes the request (60012 "Invalid request: …")
// shows neither the passphrase nor the signature.
func TestLoginRefusalHidesTheSecrets(t *testing.T) {
	url := scriptedServer(t, func(ws *websocket.Conn, frame []byte) {
		if !strings.Contains(string(frame), `"login"`) {
			return
		}
		refusal, _ := json.Marshal(map[string]string{"event": "error", "code": "60012", "msg": "Invalid request: " + string(frame)})
		_ = ws.WriteMessage(websocket.TextMessage, refusal)
	})
	key := okx.NewKey("key-1", "s3cret", "my-passphrase")
	_, err := client.Dial(testutil.Context(t), url, client.WithProtocol(okx.Protocol()),
		client.WithOnConnect(okx.Login(key)))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Invalid request")
	assert.NotContains(t, err.Error(), "my-passphrase")
	assert.Equal(t, 2, strings.Count(err.Error(), "[redacted]"), "the passphrase and the signature")
}

// Two spellings of one argument ("tickers:BTC-USDT", and the same
// instrument with its instType) are routed alike: OKX's pushes carry the
// instId, which names both. A subscription that would hold the second
// while the first is held, or both, is refused as an invalid topic before
// anything is sent for it, rather than leave one of the two silent; the
// other subscriptions of the call go ahead, and the first keeps its feed.
func TestTwoSpellingsOfOneArgumentAreRefused(t *testing.T) {
	const plain, spelled = "tickers:BTC-USDT", "tickers:instType=SPOT,instId=BTC-USDT"
	srv := exchangetest.NewServer(okx.Name)
	t.Cleanup(srv.Close)
	c := dial(t, srv)
	ctx := testutil.Context(t)

	_, err := c.Subscribe(ctx, []string{plain, spelled})
	require.ErrorIs(t, err, protocol.ErrInvalidTopic)
	assert.Zero(t, srv.CountReceived("subscribe"), "nothing sent for a subscription refused")

	subs, errs, err := c.SubscribeEach(ctx, []string{"trades:BTC-USDT", plain, spelled})
	require.NoError(t, err)
	require.NoError(t, errs[0])
	require.NoError(t, errs[1])
	require.ErrorIs(t, errs[2], protocol.ErrInvalidTopic)
	require.ErrorIs(t, errs[2], client.ErrRefused)
	assert.Nil(t, subs[2])
	sub := subs[1]

	_, err = c.Subscribe(ctx, []string{spelled})
	require.ErrorIs(t, err, protocol.ErrInvalidTopic)
	assert.ErrorContains(t, err, plain)
	again, err := c.Subscribe(ctx, []string{plain}) // the same name joins, as ever
	require.NoError(t, err)

	// A fan-out server's streams: the clashing one alone is refused.
	var parsed []*protocol.Topic
	for _, name := range []string{"trades:BTC-USDT", spelled} {
		tp, err := okx.Protocol().NewTopic(name)
		require.NoError(t, err)
		parsed = append(parsed, tp)
	}
	streams, errs, err := c.SubscribeTopics(ctx, parsed)
	require.NoError(t, err)
	require.NoError(t, errs[0])
	require.ErrorIs(t, errs[1], protocol.ErrInvalidTopic)
	require.ErrorIs(t, errs[1], client.ErrRefused)
	assert.Nil(t, streams[1])

	srv.Publish(plain, []byte(`[{"instType":"SPOT","instId":"BTC-USDT","last":"1"}]`))
	assert.Equal(t, plain, receive(t, ctx, sub).Topic)
	assert.Equal(t, plain, receive(t, ctx, again).Topic)
}

// The same holds for a client still waiting for its first connection
// (WithRetryOnFailedConnect), whose subscriptions are only queued.
func TestTwoSpellingsAreRefusedBeforeTheFirstConnection(t *testing.T) {
	srv := exchangetest.NewServer(okx.Name)
	url := srv.URL()
	srv.Close() // nothing listens: the client keeps retrying
	c, err := client.Dial(testutil.Context(t), url, client.WithProtocol(okx.Protocol()), client.WithRetryOnFailedConnect())
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	ctx := testutil.Context(t)
	_, err = c.Subscribe(ctx, []string{"tickers:BTC-USDT"})
	require.NoError(t, err, "queued")
	_, err = c.Subscribe(ctx, []string{"tickers:instType=SPOT,instId=BTC-USDT"})
	require.ErrorIs(t, err, protocol.ErrInvalidTopic)
	subs, errs, err := c.SubscribeEach(ctx, []string{"trades:BTC-USDT", "tickers:instType=SPOT,instId=BTC-USDT"})
	require.NoError(t, err)
	require.NoError(t, errs[0], "queued")
	assert.NotNil(t, subs[0])
	require.ErrorIs(t, errs[1], protocol.ErrInvalidTopic, "refused alone")
	assert.Nil(t, subs[1])
}
