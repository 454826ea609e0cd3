package protocoltest

import (
	"context"
	"encoding/binary"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// testRestore subscribes the suite's topics through pkg/client to a
// pkg/exchangetest server of the dialect, drops the connection, and
// checks on the socket itself that the restore's subscribe frames, every
// topic in them, went out in one write(2).
func testRestore(t *testing.T, s Suite) {
	srv := exchangetest.NewServer(exchangetest.Dialect(s.Name))
	defer srv.Close()
	writes := &writeLog{}
	dialer := &websocket.Dialer{
		HandshakeTimeout: 10 * time.Second,
		NetDialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			nc, err := (&net.Dialer{}).DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return &loggedConn{Conn: nc, log: writes}, nil
		},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, srv.URL(), client.WithProtocol(s.Protocol()), client.WithDialer(dialer),
		client.WithBackoff(func() backoff.BackOff { return &backoff.ZeroBackOff{} }))
	require.NoError(t, err)
	defer func() { _ = c.Close() }()
	sub, err := c.Subscribe(ctx, s.Topics)
	require.NoError(t, err)
	defer func() { _ = sub.Unsubscribe(ctx) }()

	// Ethereal's Subscribe returns once its frames are queued: the
	// server having them means they were written before the log resets.
	for _, topic := range s.Topics {
		require.NoError(t, srv.WaitSubscribers(ctx, topic, 1))
	}
	writes.reset()
	srv.DropConnections()
	for restored := false; !restored; {
		select {
		case ev := <-c.Events():
			if ev.Kind == client.Resubscribed {
				require.Equal(t, len(s.Topics), ev.Topics, "every topic restored")
				restored = true
			}
		case <-ctx.Done():
			t.Fatal("no restore within 20s")
		}
	}

	// A dialect without acknowledgements (Ethereal) reports the restore
	// once it is queued: wait for the writer to have written it.
	w := s.Server()
	withSubscribes, restored := subscribesWritten(w, writes.all(), s.Topics)
	for len(restored) < len(s.Topics) && ctx.Err() == nil {
		time.Sleep(5 * time.Millisecond)
		withSubscribes, restored = subscribesWritten(w, writes.all(), s.Topics)
	}
	assert.Equal(t, 1, withSubscribes, "the restore's frames go out in one write")
	assert.ElementsMatch(t, s.Topics, restored, "the restore names every topic once")
}

// subscribesWritten returns how many of writes carry subscribe requests
// for the topics of want, and those they subscribe (a handshake's own,
// such as Thalex's system channel, aside).
func subscribesWritten(w protocol.Server, writes [][]byte, want []string) (n int, topics []string) {
	for _, b := range writes {
		msgs, ok := clientMessages(b)
		if !ok {
			continue // the HTTP upgrade request
		}
		found := false
		for _, m := range msgs {
			reqs, _, perr := w.ParseFrame(nil, m)
			if perr != nil {
				continue
			}
			for _, req := range reqs {
				if req.Op != protocol.OpSubscribe {
					continue
				}
				for _, topic := range req.Topics {
					if slices.Contains(want, topic) {
						found = true
						topics = append(topics, topic)
					}
				}
			}
		}
		if found {
			n++
		}
	}
	return n, topics
}

// writeLog keeps what a connection wrote, one entry per Write call.
type writeLog struct {
	mu     sync.Mutex
	writes [][]byte
}

func (l *writeLog) add(p []byte) {
	l.mu.Lock()
	l.writes = append(l.writes, append([]byte(nil), p...))
	l.mu.Unlock()
}

func (l *writeLog) reset() {
	l.mu.Lock()
	l.writes = nil
	l.mu.Unlock()
}

func (l *writeLog) all() [][]byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.writes
}

// loggedConn is a socket that logs every Write.
type loggedConn struct {
	net.Conn
	log *writeLog
}

func (c *loggedConn) Write(p []byte) (int, error) {
	c.log.add(p)
	return c.Conn.Write(p)
}

// clientMessages reads b as whole masked WebSocket frames, as a client
// writes them (RFC 6455 section 5.2), and returns the text messages;
// ok is false when b is anything else.
func clientMessages(b []byte) (msgs [][]byte, ok bool) {
	for len(b) > 0 {
		if len(b) < 2 || b[1]&0x80 == 0 {
			return nil, false
		}
		n, at := uint64(b[1]&0x7f), 2
		switch n {
		case 126:
			if len(b) < 4 {
				return nil, false
			}
			n, at = uint64(binary.BigEndian.Uint16(b[2:])), 4
		case 127:
			if len(b) < 10 {
				return nil, false
			}
			n, at = binary.BigEndian.Uint64(b[2:]), 10
		}
		if len(b) < at+4 || uint64(len(b)-at-4) < n {
			return nil, false
		}
		key, payload := b[at:at+4], make([]byte, n)
		for i := range payload {
			payload[i] = b[at+4+i] ^ key[i%4]
		}
		if b[0]&0x0f == websocket.TextMessage {
			msgs = append(msgs, payload)
		}
		b = b[at+4+int(n):]
	}
	return msgs, true
}
