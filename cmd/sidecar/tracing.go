package main

import (
	"context"
	"fmt"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.uber.org/zap"
)

// tracing is -otlp-endpoint and -trace-sample: where spans go, and the
// share of the traces starting in the sidecar that are kept. Neither
// changes on a reload (reloader.reload refuses it).
type tracing struct {
	endpoint string  // an OTLP/HTTP traces URL; "" for no tracing
	sample   float64 // 0 to 1
}

// tracesFlushTimeout bounds the sending of the last spans at exit.
const tracesFlushTimeout = 5 * time.Second

// serviceName is the sidecar's service.name; OTEL_SERVICE_NAME (or
// OTEL_RESOURCE_ATTRIBUTES) overrides it.
const serviceName = "wsfan-sidecar"

// tracerProvider returns the OpenTelemetry SDK's provider exporting
// spans in batches over OTLP/HTTP to tr.endpoint, for
// sidecar.Config.TracerProvider, or nil when no endpoint is set. A
// local client's sampled traceparent is followed whatever the rate
// (ParentBased): the program that asked for the trace gets its spans.
// The exporter's failures (a collector down) are logged by log, each
// batch's once. The caller shuts the provider down, which flushes it.
func (tr tracing) tracerProvider(ctx context.Context, log *zap.Logger) (*sdktrace.TracerProvider, error) {
	if tr.endpoint == "" {
		return nil, nil
	}
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(tr.endpoint))
	if err != nil {
		return nil, fmt.Errorf("OTLP exporter: %w", err)
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", serviceName)),
		resource.WithFromEnv())
	if err != nil {
		return nil, fmt.Errorf("OTLP resource: %w", err)
	}
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		log.Warn("tracing: spans not exported", zap.Error(err))
	}))
	return sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(exp),
		sdktrace.WithResource(res),
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(tr.sample))),
	), nil
}
