package main

import (
	"encoding/json"
	"os"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// dashboardFile is the Grafana dashboard of the wsfan_* metrics.
const dashboardFile = "../../deploy/grafana/wsfan.json"

// dashboardPanel is the part of a Grafana panel the tests read; a row
// holds its panels when collapsed.
type dashboardPanel struct {
	ID      int
	Type    string
	Title   string
	Targets []struct {
		Expr  string
		RefID string `json:"refId"`
	}
	Panels []dashboardPanel
}

// dashboardQueries returns every PromQL expression of a dashboard: the
// panels' targets and the metric of each label_values() variable, and
// checks what Grafana needs to show the panels (an id each, unique, a
// query per target).
func dashboardQueries(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var d struct {
		UID        string
		Title      string
		Templating struct {
			List []struct {
				Name  string
				Type  string
				Query json.RawMessage
			}
		}
		Panels []dashboardPanel
	}
	require.NoError(t, json.Unmarshal(b, &d))
	require.NotEmpty(t, d.UID)
	require.NotEmpty(t, d.Title)

	var queries []string
	ids := make(map[int]bool)
	var walk func([]dashboardPanel)
	walk = func(ps []dashboardPanel) {
		for _, p := range ps {
			assert.False(t, ids[p.ID], "panel id %d used twice", p.ID)
			ids[p.ID] = true
			walk(p.Panels)
			if p.Type == "row" {
				continue
			}
			assert.NotEmpty(t, p.Targets, "panel %q has no query", p.Title)
			for _, tg := range p.Targets {
				assert.NotEmpty(t, tg.Expr, "panel %q target %s has no expression", p.Title, tg.RefID)
				queries = append(queries, tg.Expr)
			}
		}
	}
	walk(d.Panels)

	labelValues := regexp.MustCompile(`^label_values\(\s*(.+),\s*[a-zA-Z_]\w*\s*\)$`)
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		var q struct{ Query string }
		require.NoError(t, json.Unmarshal(v.Query, &q), "variable %s", v.Name)
		m := labelValues.FindStringSubmatch(q.Query)
		require.NotNil(t, m, "variable %s: want label_values(selector, label), got %q", v.Name, q.Query)
		queries = append(queries, m[1])
	}
	return queries
}

var (
	promqlString   = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	promqlMatchers = regexp.MustCompile(`\{[^}]*\}`)
	promqlRange    = regexp.MustCompile(`\[[^\]]*\]`)
	promqlGrouping = regexp.MustCompile(`\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`)
	promqlWord     = regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*(\s*\()?`)
	promqlKeywords = map[string]bool{"and": true, "or": true, "unless": true, "bool": true, "offset": true,
		"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true,
		"inf": true, "nan": true}
)

// metricNames returns the metric names a PromQL expression selects: the
// words left once strings, label matchers, ranges and grouping labels are
// removed, that are not functions (followed by a parenthesis), keywords
// or parts of numbers.
func metricNames(expr string) []string {
	e := promqlString.ReplaceAllString(expr, `""`)
	e = promqlMatchers.ReplaceAllString(e, " ")
	e = promqlRange.ReplaceAllString(e, " ")
	e = promqlGrouping.ReplaceAllString(e, " ")
	var names []string
	for _, m := range promqlWord.FindAllStringSubmatchIndex(e, -1) {
		word := e[m[0]:m[1]]
		if m[2] >= 0 || promqlKeywords[word] {
			continue // a function or a keyword
		}
		if m[0] > 0 && (e[m[0]-1] == '.' || e[m[0]-1] >= '0' && e[m[0]-1] <= '9') {
			continue // the exponent of a number: 1e3
		}
		names = append(names, word)
	}
	return names
}

func TestMetricNames(t *testing.T) {
	for expr, want := range map[string][]string{
		`wsfan_client_state{connection=~"$connection"}`:                                                                     {"wsfan_client_state"},
		`sum by (topic) (rate(wsfan_sidecar_topic_received_total{instance=~"$instance", topic=~"a{b}"}[$__rate_interval]))`: {"wsfan_sidecar_topic_received_total"},
		`histogram_quantile(0.99, sum by (connection, le) (rate(x_bucket{a="b"}[5m])))`:                                     {"x_bucket"},
		`sum(rate(a_sum[1m])) by (job) / ignoring (le) sum(rate(a_count[1m])) > 1e3 and on(job) up offset 5m`:               {"a_sum", "a_count", "up"},
		`topk(5, process_resident_memory_bytes) * 2`:                                                                        {"process_resident_memory_bytes"},
		`count_values("version", wsfan_build_info)`:                                                                         {"wsfan_build_info"},
	} {
		assert.Equal(t, want, metricNames(expr), expr)
	}
}
