// Package testutil holds the helpers the tests of several wsfan packages
// share: a context bounded by the test, frames written to and read
// from a plain gorilla connection with a deadline, and a loopback TCP
// pair. Assertions are
// testify's; these helpers fail the test through require.
package testutil

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"
)

// Timeout bounds every wait of these helpers: long enough for a loaded
// 2-core machine running -race, short enough that a hang fails the test.
const Timeout = 20 * time.Second

// Context returns a context that ends with the test, or after Timeout.
func Context(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	t.Cleanup(cancel)
	return ctx
}

// Send writes frame to ws as one text message.
func Send(t testing.TB, ws *websocket.Conn, frame string) {
	t.Helper()
	require.NoError(t, ws.WriteMessage(websocket.TextMessage, []byte(frame)))
}

// Recv reads one message from ws, failing the test if none arrives within
// Timeout.
func Recv(t testing.TB, ws *websocket.Conn) string {
	t.Helper()
	require.NoError(t, ws.SetReadDeadline(time.Now().Add(Timeout)))
	_, data, err := ws.ReadMessage()
	require.NoError(t, err)
	return string(data)
}

// RecvJSON reads one message from ws and decodes it as a JSON object.
func RecvJSON(t testing.TB, ws *websocket.Conn) map[string]any {
	t.Helper()
	s := Recv(t, ws)
	var v map[string]any
	require.NoError(t, json.Unmarshal([]byte(s), &v), "not a JSON object: %s", s)
	return v
}

// RSAKeys are two 2048-bit RSA keys made once per test binary: making one
// takes a while under the race detector. Thalex logins sign with them.
var RSAKeys = sync.OnceValue(func() [2]*rsa.PrivateKey {
	var keys [2]*rsa.PrivateKey
	for i := range keys {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			panic(err)
		}
		keys[i] = k
	}
	return keys
})

// TCPPair returns the two ends of a TCP connection over loopback: the
// one dialled and the one accepted. Both are closed when the test ends.
func TCPPair(t testing.TB) (dialled, accepted net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer func() { _ = ln.Close() }()
	got := make(chan net.Conn, 1)
	go func() {
		nc, _ := ln.Accept() // nil when the dial failed and the listener closed
		got <- nc
	}()
	dialled, err = net.DialTimeout("tcp", ln.Addr().String(), Timeout)
	require.NoError(t, err)
	t.Cleanup(func() { _ = dialled.Close() })
	accepted = <-got
	require.NotNil(t, accepted, "the dial was not accepted")
	t.Cleanup(func() { _ = accepted.Close() })
	return dialled, accepted
}
