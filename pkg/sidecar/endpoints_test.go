package sidecar_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/sidecar"
)

// The sidecar's upstream has a fallback endpoint: when the first goes
// down it dials the other at once, a local program keeps its connection
// and gets the topic from there, and /v1/status names the endpoint in
// use among both.
func TestSidecarFailsOverToTheNextEndpoint(t *testing.T) {
	dc := dialects[0]
	fallback := exchangetest.NewServer(dc.d)
	t.Cleanup(fallback.Close)
	r := newRig(t, dc.d, func(c *sidecar.Config) { c.Fallbacks = []string{fallback.URL()} })
	ws := r.dial(t)
	testutil.Send(t, ws, dc.subscribe(1, dc.topic))
	testutil.RecvJSON(t, ws)
	ctx := testutil.Context(t)
	require.NoError(t, r.up.WaitSubscribers(ctx, dc.topic, 1))
	st := r.sc.Status().Upstream
	assert.Len(t, st.Endpoints, 2)
	assert.Equal(t, st.Endpoints[0], st.Endpoint)

	r.up.Stop()
	require.NoError(t, fallback.WaitSubscribers(ctx, dc.topic, 1), "restored on the fallback")
	fallback.Publish(dc.topic, []byte(`{"n":1}`))
	assert.JSONEq(t, dc.frame(dc.topic, "", `{"n":1}`), testutil.Recv(t, ws), "the program's connection carried on")
	st = r.sc.Status().Upstream
	assert.Equal(t, st.Endpoints[1], st.Endpoint, "the fallback is in use")
}
