package main

import (
	"bytes"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/pkg/deribit"
	"github.com/wsfan/wsfan/pkg/exchangetest"
)

// scrape runs the sidecar against a test exchange publishing its feed,
// with a WebSocket client subscribed to one topic and an SSE client
// streaming another, waits until both got a message (so every per-topic
// series exists; the feed's messages carry Deribit's timestamp, so the
// upstream delay histogram has its series too), and returns one scrape
// of /metrics.
func scrape(t *testing.T) []byte {
	t.Helper()
	up := exchangetest.NewServer(deribit.Name)
	defer up.Close()
	up.StartFeed(exchangetest.FeedOptions{})
	topics := up.FeedTopics()
	require.GreaterOrEqual(t, len(topics), 2)
	r := startSidecar(t, map[string]string{"WSFAN_UPSTREAM": up.URL(), "WSFAN_PROTOCOL": "deribit"}, nil)

	ws, _, err := websocket.DefaultDialer.Dial("ws://"+r.addr+"/ws", nil)
	require.NoError(t, err)
	defer ws.Close()
	require.NoError(t, ws.WriteMessage(websocket.TextMessage, []byte(subscribeFrame(deribit.Name, topics[0]))))
	require.NoError(t, ws.SetReadDeadline(time.Now().Add(10*time.Second)))
	for range 2 { // the acknowledgement, then a message
		_, _, err := ws.ReadMessage()
		require.NoError(t, err)
	}
	resp, err := http.Get("http://" + r.addr + "/v1/stream?topic=" + topics[1])
	require.NoError(t, err)
	defer resp.Body.Close()
	buf := make([]byte, 64)
	_, err = io.ReadAtLeast(resp.Body, buf, len(buf))
	require.NoError(t, err)

	resp, err = http.Get("http://" + r.addr + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return body
}

// groupScrape runs the sidecar as a member of a NATS group, whose NATS
// server is not there (the member serves its metrics while it retries),
// and returns one scrape of /metrics: the metrics only a group member
// has, the NATS hop's delay among them.
func groupScrape(t *testing.T) map[string]*dto.MetricFamily {
	t.Helper()
	r := startSidecar(t, map[string]string{"WSFAN_UPSTREAM": "ws://" + freeAddr(t), "WSFAN_PROTOCOL": "deribit",
		"WSFAN_NATS": "nats://" + freeAddr(t), "WSFAN_NATS_GROUP": "scrape"}, nil)
	resp, err := http.Get("http://" + r.addr + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return families(t, body)
}

// families parses a scrape in the text format.
func families(t *testing.T, body []byte) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(bytes.NewReader(body))
	require.NoError(t, err)
	return mfs
}

// One scrape of a sidecar at work: every metric it serves (its own, the
// upstream client's, the build info, the Go and process collectors')
// passes promlint, and every metric the Grafana dashboard queries is in
// it, or, for the few only a NATS group's member has, in a member's.
func TestScrape(t *testing.T) {
	body := scrape(t)
	mfs := families(t, body)

	t.Run("promlint", func(t *testing.T) {
		problems, err := promlint.New(bytes.NewReader(body)).Lint()
		require.NoError(t, err)
		for _, p := range problems {
			t.Errorf("promlint: %s: %s", p.Metric, p.Text)
		}
	})

	t.Run("build info", func(t *testing.T) {
		require.Contains(t, mfs, "wsfan_build_info")
		m := mfs["wsfan_build_info"].GetMetric()
		require.Len(t, m, 1)
		assert.Equal(t, 1.0, m[0].GetGauge().GetValue())
		labels := make(map[string]string)
		for _, l := range m[0].GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		assert.Equal(t, map[string]string{"version": "(devel)", "revision": "unknown", "goversion": runtime.Version()}, labels,
			"a test binary: wsfan is the main module, unversioned and unstamped")
	})

	t.Run("dashboard", func(t *testing.T) {
		queries := dashboardQueries(t, dashboardFile)
		require.NotEmpty(t, queries)
		group := groupScrape(t)
		for _, q := range queries {
			names := metricNames(q)
			require.NotEmpty(t, names, "no metric in %s", q)
			for _, name := range names {
				assert.True(t, inScrape(mfs, name) || inScrape(group, name), "%s (in %s) is not in the scrape", name, q)
			}
		}
	})
}

// inScrape reports whether a scrape has metric name, or the histogram or
// summary whose _bucket, _sum or _count it is.
func inScrape(mfs map[string]*dto.MetricFamily, name string) bool {
	if _, ok := mfs[name]; ok {
		return true
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(name, suffix); ok {
			if mf := mfs[base]; mf != nil && (mf.GetType() == dto.MetricType_HISTOGRAM || mf.GetType() == dto.MetricType_SUMMARY) {
				return suffix != "_bucket" || mf.GetType() == dto.MetricType_HISTOGRAM
			}
		}
	}
	return false
}
