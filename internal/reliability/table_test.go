package reliability_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// defaults are the table's settings: the SDK's and the sidecar's own
// defaults, nothing tuned.
var defaults = settings{
	warm:    3 * time.Second,
	hold:    8 * time.Second,
	settle:  20 * time.Second,
	callTTL: 2 * time.Second,
}

// TestTable measures every fault on both routes with default settings
// and prints the table of docs/reliability.md. It takes about four
// minutes, so it runs only when asked:
//
//	WSFAN_RELIABILITY=1 go test -run Table -v -timeout 20m ./internal/reliability/
func TestTable(t *testing.T) {
	if os.Getenv("WSFAN_RELIABILITY") == "" {
		t.Skip("set WSFAN_RELIABILITY=1 to measure the table (about four minutes)")
	}
	var rows strings.Builder
	rows.WriteString("| route | fault | noticed after | noticed as | back after heal | lost | holes, unmarked: SDK · WS · SSE | calls failed, slowest failure | answered late | sent late |\n")
	rows.WriteString("|---|---|---|---|---|---|---|---|---|---|\n")
	for rt := range routes {
		for _, f := range tableFaults {
			res := run(t, rt, f, defaults)
			noticed, back := "not dropped", "–"
			if res.noticed > 0 {
				noticed = res.noticed.Round(10 * time.Millisecond).String()
			}
			if res.restored {
				back = res.recovered.Round(10 * time.Millisecond).String()
			} else {
				back = fmt.Sprintf("not within %v", defaults.settle)
			}
			holes := fmt.Sprintf("%d, %d", res.holes, res.unmarked)
			if rt == viaSidecar {
				holes += fmt.Sprintf(" · %d, %d · %d, %d", res.wsHoles, res.wsUnmarked, res.sseHoles, res.sseUnmarked)
			}
			fmt.Fprintf(&rows, "| %s | %s | %s | %s | %s | %d of %d | %s | %d of %d, %v | %d | %d |\n",
				rt, f.name, noticed, shortCause(res.cause), back, res.lost, res.published,
				holes, res.failed, res.calls, res.failFast.Round(time.Millisecond), res.late, res.sentLate)
		}
	}
	t.Logf("\n%s", rows.String())
}

// shortCause keeps the part of an error that says what was noticed.
func shortCause(cause string) string {
	switch {
	case cause == "":
		return "–"
	case strings.Contains(cause, "lagging"):
		return "lagging"
	case strings.Contains(cause, "nothing received"):
		return "silent"
	case strings.Contains(cause, "reset by peer"):
		return "reset"
	case strings.Contains(cause, "EOF"), strings.Contains(cause, "closed"):
		return "closed"
	}
	return strings.ReplaceAll(cause, "|", "/")
}
