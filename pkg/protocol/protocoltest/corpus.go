package protocoltest

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/pkg/protocol"
)

// RunCorpus runs an exchange's corpus of documented frames through both
// halves of its wire code. The corpus (testdata/documented.txt) is the
// exchange's frames as its documentation shows them, transcribed with the
// section named in a comment above each:
//
//	# docs.deribit.com, "public/subscribe"
//	--> subscribe {"jsonrpc":"2.0","id":3600,"method":"public/subscribe",...}
//	<-- response {"jsonrpc":"2.0","id":3600,"result":[...],...}
//
// A frame the server sends (<--) must classify as the kind named, and a
// notification must come back the same (key and payload) once the server
// half has written it again. A frame the client sends (-->) must parse as
// the operation named (protocol.Op's names), and a subscribe must parse
// the same once the client half has written its topics again.
func RunCorpus(t *testing.T, s Suite, path string) {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer func() { _ = f.Close() }()
	p, w := s.Protocol(), s.Server()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	frames := 0
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		dir, rest, _ := strings.Cut(text, " ")
		what, frame, _ := strings.Cut(rest, " ")
		require.True(t, json.Valid([]byte(frame)), "%s:%d: not JSON", path, line)
		switch dir {
		case "<--":
			fromServer(t, s, p, w, what, []byte(frame), path, line)
		case "-->":
			fromClient(t, p, w, what, []byte(frame), path, line)
		default:
			t.Fatalf("%s:%d: want --> or <--", path, line)
		}
		frames++
	}
	require.NoError(t, sc.Err())
	require.Positive(t, frames, "%s holds no frame", path)
}

// fromServer checks a frame the server sends.
func fromServer(t *testing.T, s Suite, p protocol.Protocol, w protocol.Server, kind string, frame []byte, path string, line int) {
	t.Helper()
	var f protocol.Frame
	require.NoError(t, p.Classify(frame, &f), "%s:%d", path, line)
	require.Equal(t, kind, f.Kind.String(), "%s:%d", path, line)
	if f.Kind != protocol.KindNotification || s.DataIsFrame {
		return
	}
	key, data := string(f.Key), string(f.Data)
	again := w.AppendNotification(nil, key, key, f.Data)
	var g protocol.Frame
	require.NoError(t, p.Classify(again, &g), "%s:%d written again: %s", path, line, again)
	assert.Equal(t, key, string(g.Key), "%s:%d: the key once written again", path, line)
	assert.JSONEq(t, data, string(g.Data), "%s:%d: the payload once written again", path, line)
}

// fromClient checks a frame the client sends.
func fromClient(t *testing.T, p protocol.Protocol, w protocol.Server, op string, frame []byte, path string, line int) {
	t.Helper()
	reqs, _, err := w.ParseFrame(nil, frame)
	require.Nil(t, err, "%s:%d", path, line)
	require.NotEmpty(t, reqs, "%s:%d", path, line)
	req := reqs[0]
	require.Nil(t, req.Err, "%s:%d", path, line)
	require.Equal(t, op, req.Op.String(), "%s:%d", path, line)
	if req.Op != protocol.OpSubscribe {
		return
	}
	topics := newTopics(t, p, req.Topics)
	var b protocol.Batch
	p.Subscribe(&b, topics, counter(), 0)
	var read []string
	for _, again := range parseAll(t, w, &b) {
		read = append(read, again.Topics...)
	}
	assert.ElementsMatch(t, req.Topics, read, "%s:%d: the topics once written again", path, line)
}
