package client_test

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// TestTranscripts replays the golden transcripts in testdata/*.txt. A
// scripted server plays the lines "--> frame" (it must read exactly that
// JSON from the client) and "<-- frame" (it sends it); the client plays
// the lines starting with "!":
//
//	!subscribe TOPIC...        Subscribe; it must succeed
//	!refused TOPIC...          Subscribe; it must be refused, naming TOPIC
//	!expect TOPIC DATA         the next message has this topic and payload
//	!call METHOD PARAMS => RESULT
//	!unsubscribe
//
// Both sides run concurrently; the wire orders them.
func TestTranscripts(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txt")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".txt")
		t.Run(name, func(t *testing.T) {
			proto, err := protocol.ByName(name)
			require.NoError(t, err)
			server, actions := readTranscript(t, file)

			done := make(chan struct{})
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				defer close(done)
				ws, err := (&websocket.Upgrader{}).Upgrade(w, r, nil)
				if err != nil {
					t.Error(err)
					return
				}
				defer ws.Close()
				playServer(t, ws, server)
			}))
			defer srv.Close()

			c, err := client.Dial(testutil.Context(t), "ws"+strings.TrimPrefix(srv.URL, "http"),
				client.WithProtocol(proto), client.WithPing(0, 0))
			require.NoError(t, err)
			playClient(t, c, actions)
			<-done
			require.NoError(t, c.Close())
		})
	}
}

func readTranscript(t *testing.T, file string) (server, actions []string) {
	f, err := os.Open(file)
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, "-->"), strings.HasPrefix(line, "<--"):
			server = append(server, line)
		case strings.HasPrefix(line, "!"):
			actions = append(actions, line[1:])
		}
	}
	require.NoError(t, sc.Err())
	return server, actions
}

func playServer(t *testing.T, ws *websocket.Conn, lines []string) {
	for _, line := range lines {
		frame := strings.TrimSpace(line[3:])
		if strings.HasPrefix(line, "<--") {
			if err := ws.WriteMessage(websocket.TextMessage, []byte(frame)); err != nil {
				t.Errorf("write %s: %v", frame, err)
				return
			}
			continue
		}
		_, got, err := ws.ReadMessage()
		if err != nil {
			t.Errorf("expected %s, read failed: %v", frame, err)
			return
		}
		if !assert.JSONEq(t, frame, string(got)) {
			return
		}
	}
}

func playClient(t *testing.T, c *client.Client, actions []string) {
	ctx := testutil.Context(t)
	var sub *client.Subscription
	for _, a := range actions {
		verb, rest, _ := strings.Cut(a, " ")
		switch verb {
		case "subscribe":
			var err error
			sub, err = c.Subscribe(ctx, strings.Fields(rest))
			require.NoError(t, err, a)
		case "refused":
			_, err := c.Subscribe(ctx, strings.Fields(rest))
			var refused *client.RefusedError
			require.ErrorAs(t, err, &refused, a)
		case "expect":
			topic, data, _ := strings.Cut(rest, " ")
			m := receive(t, sub)
			assert.Equal(t, topic, m.Topic)
			assert.JSONEq(t, data, string(m.Data))
		case "call":
			call, result, _ := strings.Cut(rest, " => ")
			method, params, _ := strings.Cut(call, " ")
			var p json.RawMessage
			if params != "" {
				p = json.RawMessage(params)
			}
			got, err := c.CallRaw(ctx, method, p)
			require.NoError(t, err, a)
			assert.JSONEq(t, result, string(got))
		case "unsubscribe":
			require.NoError(t, sub.Unsubscribe(ctx))
		default:
			t.Fatalf("unknown action %q", a)
		}
	}
}
