package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/deribit"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// collector is an OTLP/HTTP endpoint that counts the export requests it
// gets, by path and content type.
type collector struct {
	mu       sync.Mutex
	requests []string
	bodies   [][]byte
}

func (c *collector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	c.mu.Lock()
	c.requests = append(c.requests, r.Method+" "+r.URL.Path+" "+r.Header.Get("Content-Type"))
	c.bodies = append(c.bodies, body)
	c.mu.Unlock()
	w.Header().Set("Content-Type", "application/x-protobuf")
}

func (c *collector) got() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.requests
}

// holds reports whether an export carried b (a trace id's 16 bytes, as
// OTLP's protobuf writes it).
func (c *collector) holds(b []byte) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, body := range c.bodies {
		if bytes.Contains(body, b) {
			return true
		}
	}
	return false
}

// tracedOptions parses args after -otlp-endpoint, with the collector's
// URL, and returns the provider they make and a function that shuts it
// down, flushing its spans.
func tracedOptions(t *testing.T, col *collector, args ...string) (trace.TracerProvider, func()) {
	t.Helper()
	srv := httptest.NewServer(col)
	t.Cleanup(srv.Close)
	o, err := parseOptions(append([]string{"-otlp-endpoint", srv.URL}, args...), func(string) string { return "" }, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, srv.URL+"/v1/traces", o.tracing.endpoint, "the traces path is added")
	tp, err := o.tracing.tracerProvider(testutil.Context(t), zap.NewNop())
	require.NoError(t, err)
	return tp, func() { require.NoError(t, tp.Shutdown(context.Background())) }
}

// With -otlp-endpoint, spans go to the collector over OTLP/HTTP, in
// protobuf, on /v1/traces; every trace is kept by default.
func TestTracesReachTheCollector(t *testing.T) {
	var col collector
	tp, shutdown := tracedOptions(t, &col)
	_, span := tp.Tracer("test").Start(context.Background(), "call")
	span.End()
	shutdown()
	assert.Equal(t, []string{"POST /v1/traces application/x-protobuf"}, col.got())
}

// -trace-sample 0 keeps no trace that starts in the sidecar, and still
// every trace a local client sampled (ParentBased).
func TestTraceSampleFollowsTheClient(t *testing.T) {
	var col collector
	tp, shutdown := tracedOptions(t, &col, "-trace-sample", "0")
	_, own := tp.Tracer("test").Start(context.Background(), "own")
	own.End()
	parent := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2},
		TraceFlags: trace.FlagsSampled, Remote: true})
	_, child := tp.Tracer("test").Start(trace.ContextWithRemoteSpanContext(context.Background(), parent), "child")
	child.End()
	assert.False(t, own.SpanContext().IsSampled(), "a trace of its own is dropped")
	assert.True(t, child.SpanContext().IsSampled(), "the client's sampled trace is followed")
	shutdown()
	assert.Len(t, col.got(), 1, "one export, of the client's span")
}

// Without -otlp-endpoint there is no provider: the sidecar makes no
// spans. Bad values are refused, saying what is wanted.
func TestTracingFlags(t *testing.T) {
	o, err := parseOptions(nil, func(string) string { return "" }, io.Discard)
	require.NoError(t, err)
	tp, err := o.tracing.tracerProvider(context.Background(), zap.NewNop())
	require.NoError(t, err)
	assert.Nil(t, tp)

	for _, args := range [][]string{{"-trace-sample", "2"}, {"-trace-sample", "-0.1"}, {"-otlp-endpoint", "localhost:4318"}, {"-otlp-endpoint", "grpc://collector:4317"}} {
		_, err := parseOptions(args, func(string) string { return "" }, io.Discard)
		require.Error(t, err, args)
		assert.Contains(t, err.Error(), "want", args)
	}
	o, err = parseOptions([]string{"-otlp-endpoint", "https://collector.example/otlp/v1/traces"}, func(string) string { return "" }, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, "https://collector.example/otlp/v1/traces", o.tracing.endpoint, "a path given is kept")
}

// The program as deployed: with -otlp-endpoint, the span of a call
// forwarded for a WebSocket client that sent a traceparent reaches the
// collector under the client's trace id, flushed at exit at the latest;
// a reload that changes -trace-sample is refused, naming it.
func TestProgramSendsTraces(t *testing.T) {
	var col collector
	srv := httptest.NewServer(&col)
	t.Cleanup(srv.Close)
	up := exchangetest.NewServer(deribit.Name)
	t.Cleanup(up.Close)
	up.Handle("public/get_time", func(json.RawMessage) (any, *protocol.Error) { return 1700000000000, nil })
	file := filepath.Join(t.TempDir(), "sidecar.yaml")
	require.NoError(t, os.WriteFile(file, []byte("trace_sample: 1\n"), 0o600))
	p := startProgram(t, up, "-config", file, "-otlp-endpoint", srv.URL)

	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	ws, resp, err := websocket.DefaultDialer.Dial("ws://"+p.addr+"/ws",
		http.Header{"Traceparent": {"00-" + traceID + "-00f067aa0ba902b7-01"}})
	require.NoError(t, err)
	_ = resp.Body.Close()
	defer ws.Close()
	require.NoError(t, ws.WriteMessage(websocket.TextMessage, []byte(`{"jsonrpc":"2.0","id":3,"method":"public/get_time","params":{}}`)))
	_, answer, err := ws.ReadMessage()
	require.NoError(t, err)
	assert.Contains(t, string(answer), "1700000000000")

	require.NoError(t, os.WriteFile(file, []byte("trace_sample: 0.5\n"), 0o600))
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGHUP))
	p.waitLog(t, "config reload refused")
	assert.Contains(t, p.stderr.String(), "trace_sample (")
	assert.Contains(t, p.stderr.String(), "changed: needs a restart")

	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	p.wait(t)
	id, err := hex.DecodeString(traceID)
	require.NoError(t, err)
	assert.Contains(t, col.got(), "POST /v1/traces application/x-protobuf")
	assert.True(t, col.holds(id), "the client's trace id was exported")
}
