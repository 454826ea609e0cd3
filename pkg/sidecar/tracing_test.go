package sidecar_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/ethereum"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/sidecar"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// A local client's W3C trace context, as a traced program sends it.
const (
	clientTraceID     = "4bf92f3577b34da6a3ce929d0e0e4736"
	clientSpanID      = "00f067aa0ba902b7"
	clientTraceparent = "00-" + clientTraceID + "-" + clientSpanID + "-01"
)

// tracedRig starts a sidecar of dialect d whose spans go to the returned
// in-memory exporter, synchronously: a span is there once it has ended.
func tracedRig(t *testing.T, d exchangetest.Dialect) (*rig, *tracetest.InMemoryExporter) {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(testutil.Context(t)) })
	r := newRig(t, d, func(c *sidecar.Config) { c.TracerProvider = tp })
	return r, exp
}

// spanNamed returns the exported span named name, failing the test when
// there is none or more than one.
func spanNamed(t *testing.T, spans tracetest.SpanStubs, name string) tracetest.SpanStub {
	t.Helper()
	var found []tracetest.SpanStub
	for _, s := range spans {
		if s.Name == name {
			found = append(found, s)
		}
	}
	require.Len(t, found, 1, "spans named %s among %d", name, len(spans))
	return found[0]
}

// A call forwarded for a WebSocket client that sent a traceparent on its
// upgrade request is a server span under that trace, its parent the
// client's span, with the upstream call (to a real exchange server) its
// child; both end before the answer reaches the client.
func TestForwardedCallSpansUnderTheClientsTrace(t *testing.T) {
	r, exp := tracedRig(t, ethereum.Name)
	r.up.Handle("eth_blockNumber", func(json.RawMessage) (any, *protocol.Error) { return "0x10", nil })
	ws := r.dialWith(t, "", http.Header{"Traceparent": {clientTraceparent}})
	testutil.Send(t, ws, `{"jsonrpc":"2.0","id":7,"method":"eth_blockNumber","params":[]}`)
	require.JSONEq(t, `{"jsonrpc":"2.0","id":7,"result":"0x10"}`, testutil.Recv(t, ws))

	spans := exp.GetSpans()
	fwd := spanNamed(t, spans, "sidecar.forward")
	call := spanNamed(t, spans, "upstream.call")
	assert.Equal(t, clientTraceID, fwd.SpanContext.TraceID().String())
	assert.Equal(t, clientSpanID, fwd.Parent.SpanID().String(), "the client's span is the parent")
	assert.True(t, fwd.Parent.IsRemote())
	assert.Equal(t, trace.SpanKindServer, fwd.SpanKind)
	assert.Contains(t, fwd.Attributes, attribute.String("rpc.method", "eth_blockNumber"))
	assert.Equal(t, clientTraceID, call.SpanContext.TraceID().String())
	assert.Equal(t, fwd.SpanContext.SpanID(), call.Parent.SpanID(), "the upstream call is the forward's child")
	assert.Equal(t, trace.SpanKindClient, call.SpanKind)
	assert.Equal(t, 1, r.up.CountReceived("eth_blockNumber"))
}

// A call the upstream answers with an error is a span that says so; a
// client that sent no traceparent gets a trace of its own.
func TestForwardedCallErrorSpan(t *testing.T) {
	r, exp := tracedRig(t, ethereum.Name)
	r.up.Handle("eth_call", func(json.RawMessage) (any, *protocol.Error) {
		return nil, &protocol.Error{Code: -32000, Message: "execution reverted"}
	})
	ws := r.dial(t)
	testutil.Send(t, ws, `{"jsonrpc":"2.0","id":1,"method":"eth_call","params":[]}`)
	assert.Contains(t, testutil.Recv(t, ws), "execution reverted")

	fwd := spanNamed(t, exp.GetSpans(), "sidecar.forward")
	assert.False(t, fwd.Parent.IsValid(), "a root span")
	assert.Equal(t, "Error", fwd.Status.Code.String())
	assert.Contains(t, fwd.Status.Description, "execution reverted")
}

// An SSE stream's round of upstream subscribes is a span under the
// traceparent of the stream's request, naming how many topics it
// subscribed.
func TestSubscribeRoundSpanUnderTheStreamsTrace(t *testing.T) {
	r, exp := tracedRig(t, thalex.Name)
	const topic = "ticker.BTC-PERPETUAL.raw"
	req, err := http.NewRequestWithContext(testutil.Context(t), http.MethodGet, r.url+"/v1/stream?topic="+topic, nil)
	require.NoError(t, err)
	req.Header.Set("Traceparent", clientTraceparent)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { _ = resp.Body.Close() })
	require.Equal(t, http.StatusOK, resp.StatusCode)

	waitFor(t, "the round's span", func() bool {
		for _, s := range exp.GetSpans() {
			if s.Name == "sidecar.subscribe" {
				return true
			}
		}
		return false
	})
	round := spanNamed(t, exp.GetSpans(), "sidecar.subscribe")
	assert.Equal(t, clientTraceID, round.SpanContext.TraceID().String())
	assert.Equal(t, clientSpanID, round.Parent.SpanID().String())
	assert.Equal(t, trace.SpanKindClient, round.SpanKind)
	assert.Contains(t, round.Attributes, attribute.Int("wsfan.topics", 1))
	assert.Equal(t, 1, r.up.CountSubscribes(topic))
}

// BenchmarkForwardedCallTraced is BenchmarkForwardedCall with every call
// sampled and its two spans kept in memory: what tracing costs when on.
func BenchmarkForwardedCallTraced(b *testing.B) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	benchForward(b, func(c *sidecar.Config) { c.TracerProvider = tp })
	if len(exp.GetSpans()) == 0 {
		b.Fatal("no spans")
	}
}
