package sidecar

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/otel/trace"
)

// A traced request whose topics join a round another request started is
// one of the round span's links; an untraced one adds none.
func TestGatherLinksTheRequestsThatJoin(t *testing.T) {
	h := &hub{gathering: []*topic{{name: "a"}}} // a round about to start
	joining := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2},
		TraceFlags: trace.FlagsSampled, Remote: true})
	batch, links := h.gather([]*topic{{name: "b"}}, joining)
	assert.Nil(t, batch, "the round's first request opens it")
	assert.Nil(t, links)
	batch, _ = h.gather([]*topic{{name: "c"}}, trace.SpanContext{})
	assert.Nil(t, batch)
	assert.Len(t, h.gathering, 3)
	assert.Equal(t, []trace.Link{{SpanContext: joining}}, h.joined)
}
