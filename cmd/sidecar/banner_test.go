package main

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The commands the demo's banner suggests work as printed, with Go
// alone: the SSE stream (what curl -N shows), cmd/wscat with the
// subscribe frame pasted, and the ticker example pointed at the sidecar.
func TestBannerCommandsWork(t *testing.T) {
	pr, pw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		err := run(ctx, []string{"-demo", "-listen", "127.0.0.1:0"}, noEnv, pw, io.Discard)
		_ = pw.Close()
		done <- err
	}()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	var banner []string
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		banner = append(banner, strings.TrimSpace(sc.Text()))
		if strings.HasPrefix(banner[len(banner)-1], "Press Ctrl+C") {
			break
		}
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	line := func(prefix string) string {
		t.Helper()
		for i, l := range banner {
			if strings.HasPrefix(l, prefix) {
				return banner[i]
			}
		}
		t.Fatalf("the banner has no %q line:\n%s", prefix, strings.Join(banner, "\n"))
		return ""
	}
	after := func(prefix string) string { // the line after the one starting with prefix
		t.Helper()
		for i, l := range banner {
			if strings.HasPrefix(l, prefix) && i+1 < len(banner) {
				return banner[i+1]
			}
		}
		t.Fatalf("the banner has no %q line", prefix)
		return ""
	}

	// The status page's URL: the page itself.
	page := regexp.MustCompile(`(http://\S+/)$`).FindStringSubmatch(line("Open the status page"))
	require.NotNil(t, page)
	resp, err := http.Get(page[1])
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	assert.Contains(t, string(body), "wsfan sidecar", "the status page")

	// curl -N 'http://ADDR/v1/stream?topic=T': the first event.
	stream := regexp.MustCompile(`'(http://[^']+/v1/stream\?topic=[^']+)'`).FindStringSubmatch(line("curl -N"))
	require.NotNil(t, stream)
	resp, err = http.Get(stream[1])
	require.NoError(t, err)
	events := bufio.NewScanner(resp.Body)
	for events.Scan() && !strings.HasPrefix(events.Text(), "data:") {
	}
	assert.Contains(t, events.Text(), `"topic":"ticker.BTC-PERPETUAL.raw"`)
	_ = resp.Body.Close()

	// curl -s 'http://ADDR/v1/book?instrument=I': the book, valid.
	bookURL := regexp.MustCompile(`'(http://[^']+/v1/book\?instrument=[^']+)'`).FindStringSubmatch(line("curl -s '"))
	require.NotNil(t, bookURL)
	require.Eventually(t, func() bool {
		resp, err := http.Get(bookURL[1])
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode == http.StatusOK && strings.Contains(string(body), `"valid":true`)
	}, 10*time.Second, 50*time.Millisecond)

	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	goRun := func(stdin, command string) string {
		t.Helper()
		fields := strings.Fields(command)
		require.Equal(t, "go", fields[0], command)
		cctx, ccancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer ccancel()
		cmd := exec.CommandContext(cctx, "go", fields[1:]...)
		cmd.Dir = root
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s: %s", command, out)
		return string(out)
	}

	// go run ./cmd/wscat ws://ADDR/ws, then the subscribe frame pasted.
	wscat := line("go run ./cmd/wscat")
	frame := after("go run ./cmd/wscat")
	out := goRun(frame+"\n", strings.Replace(wscat, "./cmd/wscat", "./cmd/wscat -n 2", 1))
	assert.Contains(t, out, `"result":["ticker.BTC-PERPETUAL.raw"]`)
	assert.Contains(t, out, `{"channel_name":"ticker.BTC-PERPETUAL.raw","notification":`)

	// go run ./examples/ticker -url ws://ADDR/ws -protocol thalex -topics T
	out = goRun("", line("go run ./examples/ticker")+" -n 2")
	assert.Equal(t, 2, strings.Count(out, "ticker.BTC-PERPETUAL.raw "), out)
}

// Each command the banner prints is read by a shell as the words meant,
// with a token holding a quote and characters shells read (?, &): bash
// with failglob refuses an unquoted ? that matches no file, as zsh does
// by default, and any other slip splits or changes the words.
func TestBannerPastesIntoAShell(t *testing.T) {
	const token = `it's?&x`
	var out strings.Builder
	d, err := startDemo("thalex")
	require.NoError(t, err)
	defer d.close()
	d.printHelp(&out, "127.0.0.1:8765", token)

	// The lines that are commands, each split into its words by the shell.
	words := make(map[string][]string)
	for _, l := range strings.Split(out.String(), "\n") {
		l = strings.TrimSpace(l)
		if !strings.HasPrefix(l, "curl ") && !strings.HasPrefix(l, "go run ") {
			continue
		}
		cmd, _, _ := strings.Cut(l, " | ") // curl ... | grep ^wsfan_sidecar
		sh := exec.Command("bash", "-O", "failglob", "-c", `printf '%s\n' `+cmd)
		sh.Dir = t.TempDir()
		got, err := sh.CombinedOutput()
		require.NoError(t, err, "%s: %s", cmd, got)
		w := strings.Split(strings.TrimSuffix(string(got), "\n"), "\n")
		words[w[len(w)-1]] = w
	}
	header := "Authorization: Bearer " + token
	ws := "ws://127.0.0.1:8765/ws?token=it%27s%3F%26x"
	assert.Equal(t, []string{"curl", "-N", "-H", header, "http://127.0.0.1:8765/v1/stream?topic=ticker.BTC-PERPETUAL.raw"},
		words["http://127.0.0.1:8765/v1/stream?topic=ticker.BTC-PERPETUAL.raw"])
	assert.Equal(t, []string{"curl", "-s", "-H", header, "http://127.0.0.1:8765/v1/book?instrument=BTC-PERPETUAL"},
		words["http://127.0.0.1:8765/v1/book?instrument=BTC-PERPETUAL"])
	assert.Equal(t, []string{"go", "run", "./cmd/wscat", "-H", header, ws}, words[ws])
	assert.Equal(t, []string{"go", "run", "./examples/ticker", "-url", ws, "-protocol", "thalex", "-topics", "ticker.BTC-PERPETUAL.raw"},
		words["ticker.BTC-PERPETUAL.raw"])
	assert.Equal(t, []string{"curl", "-s", "-H", header, "http://127.0.0.1:8765/v1/status"}, words["http://127.0.0.1:8765/v1/status"])
}

// A sidecar listening on every address is suggested at 127.0.0.1, its
// port kept; any other address as it is.
func TestDialAddr(t *testing.T) {
	for addr, want := range map[string]string{
		"0.0.0.0:8765":   "127.0.0.1:8765",
		"[::]:8765":      "127.0.0.1:8765",
		"127.0.0.1:8765": "127.0.0.1:8765",
		"[::1]:8765":     "[::1]:8765",
		"10.1.2.3:80":    "10.1.2.3:80",
	} {
		a, err := net.ResolveTCPAddr("tcp", addr)
		require.NoError(t, err)
		assert.Equal(t, want, dialAddr(a), addr)
	}
}
