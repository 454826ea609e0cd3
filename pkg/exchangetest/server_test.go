package exchangetest_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/deribit"
	"github.com/wsfan/wsfan/pkg/ethereal"
	"github.com/wsfan/wsfan/pkg/ethereum"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/thalex"
)

func TestDialectNames(t *testing.T) {
	for _, d := range []exchangetest.Dialect{thalex.Name, deribit.Name, ethereum.Name, ethereal.Name} {
		got, err := exchangetest.ParseDialect(strings.ToUpper(d.String()))
		require.NoError(t, err)
		require.EqualValues(t, d, got)
	}
	if _, err := exchangetest.ParseDialect("binance"); err == nil {
		t.Fatal("ParseDialect accepted an unknown name")
	}
}

func TestURLAndAddr(t *testing.T) {
	srv := newServer(t, thalex.Name)
	require.EqualValues(t, thalex.Name, srv.Dialect())
	if !strings.HasPrefix(srv.Addr(), "127.0.0.1:") || strings.HasSuffix(srv.Addr(), ":0") {
		t.Fatalf("Addr %q", srv.Addr())
	}
	require.EqualValues(t, "ws://"+srv.Addr()+"/ws", srv.URL())
	// "/" serves too.
	ws, resp, err := websocket.DefaultDialer.Dial("ws://"+srv.Addr()+"/", nil)
	require.NoError(t, err)
	_ = resp.Body.Close()
	_ = ws.Close()
}

func TestStopStartSamePort(t *testing.T) {
	srv := newServer(t, thalex.Name)
	addr := srv.Addr()
	ws := dial(t, srv)
	testutil.Send(t, ws, `{"id":1,"method":"public/subscribe","params":{"channels":["a"]}}`)
	testutil.Recv(t, ws)
	require.NoError(t, srv.WaitConnections(testutil.Context(t), 1))

	srv.Stop()
	require.EqualValues(t, 0, srv.Connections())
	require.EqualValues(t, 0, srv.Subscribers("a"))
	require.NoError(t, ws.SetReadDeadline(time.Now().Add(5*time.Second)))
	if _, _, err := ws.ReadMessage(); err == nil {
		t.Fatal("connection survived Stop")
	}
	if _, resp, err := websocket.DefaultDialer.Dial(srv.URL(), nil); err == nil {
		_ = resp.Body.Close()
		t.Fatal("dial succeeded while stopped")
	}

	require.NoError(t, srv.Start())
	require.EqualValues(t, addr, srv.Addr())
	ws2 := dial(t, srv)
	testutil.Send(t, ws2, `{"id":1,"method":"public/subscribe","params":{"channels":["a"]}}`)
	require.EqualValues(t, `{"id":1,"result":["a"]}`, testutil.Recv(t, ws2))
	require.EqualValues(t, 1, srv.Connections())
}

func TestDropConnections(t *testing.T) {
	srv := newServer(t, deribit.Name)
	ws1, ws2 := dial(t, srv), dial(t, srv)
	require.NoError(t, srv.WaitConnections(testutil.Context(t), 2))
	srv.DropConnections()
	for _, ws := range []*websocket.Conn{ws1, ws2} {
		require.NoError(t, ws.SetReadDeadline(time.Now().Add(5*time.Second)))
		_, _, err := ws.ReadMessage()
		if !websocket.IsCloseError(err, websocket.CloseAbnormalClosure) { // 1006: no close frame
			t.Fatalf("want an abrupt close, got %v", err)
		}
	}
	require.NoError(t, srv.WaitConnections(testutil.Context(t), 0))
	dial(t, srv) // still listening
	require.NoError(t, srv.WaitConnections(testutil.Context(t), 1))
}

func TestReceivedRecording(t *testing.T) {
	srv := newServer(t, thalex.Name)
	ws1 := dial(t, srv)
	require.NoError(t, srv.WaitConnections(testutil.Context(t), 1))
	ws2 := dial(t, srv)
	testutil.Send(t, ws1, `{"id":1,"method":"public/subscribe","params":{"channels":["a"]}}`)
	testutil.Recv(t, ws1)
	testutil.Send(t, ws2, `[{"id":1,"method":"public/subscribe","params":{"channels":["a"]}},{"id":2,"method":"public/subscribe","params":{"channels":["b"]}}]`)
	testutil.Recv(t, ws2)
	require.NoError(t, ws2.WriteMessage(websocket.BinaryMessage, []byte{1, 2, 3}))
	require.NoError(t, srv.WaitReceived(testutil.Context(t), "public/subscribe", 2))
	require.EqualValues(t, 2, srv.CountReceived("public/subscribe"))

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var got []exchangetest.Received
	for len(got) < 3 && ctx.Err() == nil {
		require.NoError(t, srv.WaitConnections(ctx, 2))
		got = srv.Received()
	}
	require.EqualValues(t, 3, len(got))
	require.EqualValues(t, 1, got[0].Conn)
	require.EqualValues(t, 2, got[1].Conn)
	require.EqualValues(t, "\x01\x02\x03", string(got[2].Data))
	if got[0].Time.IsZero() || got[1].Time.Before(got[0].Time) {
		t.Fatal("bad times")
	}

	srv.ResetReceived()
	require.EqualValues(t, 0, len(srv.Received()))
	require.EqualValues(t, 0, srv.CountReceived("public/subscribe"))
	ctx2, cancel2 := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel2()
	if err := srv.WaitReceived(ctx2, "public/subscribe", 1); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitReceived: %v", err)
	}
}

func TestResponseDelay(t *testing.T) {
	srv := newServer(t, thalex.Name)
	ws := dial(t, srv)
	testutil.Send(t, ws, `{"id":1,"method":"public/subscribe","params":{"channels":["a"]}}`)
	testutil.Recv(t, ws)

	srv.SetResponseDelay(150 * time.Millisecond)
	start := time.Now()
	testutil.Send(t, ws, `{"id":2,"method":"public/subscribe","params":{"channels":["b"]}}`)
	require.NoError(t, srv.WaitReceived(testutil.Context(t), "public/subscribe", 2))
	srv.Publish("a", []byte(`1`)) // not delayed: overtakes the response
	require.EqualValues(t, `{"channel_name":"a","notification":1}`, testutil.Recv(t, ws))
	require.EqualValues(t, `{"id":2,"result":["b"]}`, testutil.Recv(t, ws))
	if d := time.Since(start); d < 150*time.Millisecond {
		t.Fatalf("response after %v", d)
	}
}

func TestSilentAndPongs(t *testing.T) {
	srv := newServer(t, thalex.Name)
	ws := dial(t, srv)
	pongs := make(chan string, 10)
	ws.SetPongHandler(func(s string) error { pongs <- s; return nil })

	ping := func(data string) {
		t.Helper()
		require.NoError(t, ws.WriteControl(websocket.PingMessage, []byte(data), time.Now().Add(time.Second)))
	}
	ping("p1")
	recvPong := func() string { // the pong handler runs inside ReadMessage
		t.Helper()
		require.NoError(t, ws.SetReadDeadline(time.Now().Add(100*time.Millisecond)))
		_, _, _ = ws.ReadMessage()
		select {
		case p := <-pongs:
			return p
		default:
			return ""
		}
	}
	require.EqualValues(t, "p1", recvPong())

	srv.SetPongs(false)
	ping("p2")
	require.EqualValues(t, "", recvPong())
	srv.SetPongs(true)
	ws = dial(t, srv) // a timed-out gorilla read cannot be resumed
	ws.SetPongHandler(func(s string) error { pongs <- s; return nil })
	ping("p3")
	require.EqualValues(t, "p3", recvPong())

	ws = dial(t, srv)
	srv.SetSilent(true)
	testutil.Send(t, ws, `{"id":1,"method":"public/subscribe","params":{"channels":["a"]}}`)
	require.NoError(t, srv.WaitSubscribers(testutil.Context(t), "a", 1)) // still reading and handling
	srv.Publish("a", []byte(`1`))
	noMessage(t, ws, 100*time.Millisecond)
	require.EqualValues(t, 3, srv.Connections())
}

func TestInjectedFrames(t *testing.T) {
	srv := newServer(t, thalex.Name)
	ws := dial(t, srv)
	require.NoError(t, srv.WaitConnections(testutil.Context(t), 1))

	// Thalex's notices come to connections subscribed to system only.
	require.Zero(t, srv.SendReconnectNotice())
	testutil.Send(t, ws, `{"id":1,"method":"public/subscribe","params":{"channels":["system"]}}`)
	require.EqualValues(t, `{"id":1,"result":["system"]}`, testutil.Recv(t, ws))
	require.NoError(t, srv.WaitSubscribers(testutil.Context(t), "system", 1))
	require.EqualValues(t, 1, srv.SendReconnectNotice())
	require.EqualValues(t, `{"channel_name":"system","notification":{"event":"reconnect"}}`, testutil.Recv(t, ws))
	require.Zero(t, srv.SendHeartbeatRequest(), "Thalex has no heartbeat requests")
	hb := newServer(t, deribit.Name)
	hbws := dial(t, hb)
	require.NoError(t, hb.WaitConnections(testutil.Context(t), 1))
	require.EqualValues(t, 1, hb.SendHeartbeatRequest())
	require.EqualValues(t, `{"jsonrpc":"2.0","method":"heartbeat","params":{"type":"test_request"}}`, testutil.Recv(t, hbws))
	require.EqualValues(t, 1, srv.PublishRaw([]byte(`{"raw":true}`)))
	require.EqualValues(t, `{"raw":true}`, testutil.Recv(t, ws))

	require.EqualValues(t, 1, srv.SendBinary([]byte{0xff}))
	require.NoError(t, ws.SetReadDeadline(time.Now().Add(5*time.Second)))
	typ, data, err := ws.ReadMessage()
	require.NoError(t, err)
	require.EqualValues(t, websocket.BinaryMessage, typ)
	require.EqualValues(t, "\xff", string(data))

	require.EqualValues(t, 1, srv.SendOversized(1<<20))
	big := testutil.Recv(t, ws)
	require.EqualValues(t, 1<<20, len(big))
	require.EqualValues(t, byte('"'), big[0])
	require.EqualValues(t, byte('"'), big[len(big)-1])
}

func TestCloseIsIdempotent(t *testing.T) {
	srv := exchangetest.NewServer(ethereal.Name)
	srv.StartFeed(exchangetest.FeedOptions{})
	ws := dial(t, srv)
	require.NoError(t, srv.WaitConnections(testutil.Context(t), 1))
	srv.Close()
	srv.Close()
	srv.Stop()
	require.EqualValues(t, 0, srv.Connections())
	if err := srv.Start(); err == nil {
		t.Fatal("Start after Close succeeded")
	}
	_ = ws.Close()
}

func TestCloseUnblocksPublishToStuckClient(t *testing.T) {
	srv := exchangetest.NewServer(thalex.Name)
	ws := dial(t, srv)
	testutil.Send(t, ws, `{"id":1,"method":"public/subscribe","params":{"channels":["a"]}}`)
	require.NoError(t, srv.WaitSubscribers(testutil.Context(t), "a", 1))

	published := make(chan struct{})
	go func() { // the client never reads: queues and socket buffers fill up
		defer close(published)
		big := []byte(`"` + strings.Repeat("x", 64<<10) + `"`)
		for range 10_000 {
			srv.Publish("a", big)
		}
	}()
	require.NoError(t, srv.WaitReceived(testutil.Context(t), "public/subscribe", 1))
	srv.Close()
	select {
	case <-published:
	case <-time.After(5 * time.Second):
		t.Fatal("Publish still blocked after Close")
	}
}
