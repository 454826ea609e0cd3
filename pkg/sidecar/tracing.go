package sidecar

import (
	"context"
	"net/http"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// tracerName names the sidecar's spans' instrumentation scope.
const tracerName = "github.com/wsfan/wsfan/pkg/sidecar"

// tracer starts the sidecar's spans through Config.TracerProvider, with
// the OpenTelemetry API only: the SDK and its exporter are the program's
// (cmd/sidecar wires them). Its zero value, with no provider, starts
// none: the call paths then read one nil field and allocate nothing
// (BenchmarkForwardTracingOff). Set by New, read only after.
type tracer struct {
	t trace.Tracer // nil: tracing is off
}

// newTracer returns the tracer of tp; the zero tracer for tp nil.
func newTracer(tp trace.TracerProvider) tracer {
	if tp == nil {
		return tracer{}
	}
	return tracer{t: tp.Tracer(tracerName)}
}

// remote returns the span context a local client's HTTP request carries
// in its W3C traceparent (and tracestate) header: the parent of the
// spans of the client's calls and subscribes. It is invalid when the
// request carries none, or a malformed one, or tracing is off.
func (tr tracer) remote(r *http.Request) trace.SpanContext {
	if tr.t == nil || r.Header.Get("Traceparent") == "" {
		return trace.SpanContext{}
	}
	ctx := propagation.TraceContext{}.Extract(context.Background(), propagation.HeaderCarrier(r.Header))
	return trace.SpanContextFromContext(ctx)
}

// start starts a span named name of kind, with attr, as a child of
// parent when it is valid (a local client's, remote), else of the span
// ctx holds, if any; links name more requests it serves (a subscribe
// round's other clients). It returns ctx holding the span, or ctx and a
// nil span when tracing is off. The caller ends the span with end.
func (tr tracer) start(ctx context.Context, parent trace.SpanContext, name string, kind trace.SpanKind, attr attribute.KeyValue, links []trace.Link) (context.Context, trace.Span) {
	if tr.t == nil {
		return ctx, nil
	}
	if parent.IsValid() {
		ctx = trace.ContextWithRemoteSpanContext(ctx, parent)
	}
	return tr.t.Start(ctx, name, trace.WithSpanKind(kind), trace.WithAttributes(attr), trace.WithLinks(links...))
}

// end records err on span, when there is one, and ends it; a nil span
// (tracing off) is left alone.
func end(span trace.Span, err error) {
	if span == nil {
		return
	}
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}
