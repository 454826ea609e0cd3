package browsertest

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/sidecartest"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/okx"
	"github.com/wsfan/wsfan/pkg/sidecar"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// The tests drive a real browser, Debian's chromium (or $CHROMIUM). CI
// installs it (.ci/run); elsewhere a machine without it skips them,
// saying so, unless $CI is set, where its absence fails them.
func browser(t *testing.T) context.Context {
	t.Helper()
	path := os.Getenv("CHROMIUM")
	if path == "" {
		path, _ = exec.LookPath("chromium")
	}
	if path == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("chromium is not installed: .ci/run installs it (apt-get install chromium)")
		}
		t.Skip("chromium is not installed (apt-get install chromium); the browser tests need it")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.NoSandbox, // CI runs as root
		chromedp.WindowSize(1000, 800),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelBrowser := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 60*time.Second)
	t.Cleanup(func() {
		cancelTimeout()
		cancelBrowser()
		cancelAlloc()
	})
	require.NoError(t, chromedp.Run(ctx), "start chromium")
	return ctx
}

// screenshot saves the page as a PNG a reviewer can look at, under
// $WSFAN_SCREENSHOT_DIR or browsertest/out (kept out of git).
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	var png []byte
	require.NoError(t, chromedp.Run(ctx, chromedp.FullScreenshot(&png, 100)))
	dir := os.Getenv("WSFAN_SCREENSHOT_DIR")
	if dir == "" {
		dir = "out"
	}
	require.NoError(t, os.MkdirAll(dir, 0o755))
	path := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(path, png, 0o644))
	abs, _ := filepath.Abs(path)
	t.Logf("screenshot: %s", abs)
}

// rig is a test exchange with a feed, and a sidecar serving it through a
// proxy that can cut every connection, as a network would.
type rig struct {
	ex    *exchangetest.Server
	sc    *sidecar.Server
	proxy *proxy
}

func newRig(t *testing.T, allowedOrigins ...string) *rig {
	t.Helper()
	ex := exchangetest.NewServer(thalex.Name)
	t.Cleanup(ex.Close)
	ex.StartFeed(exchangetest.FeedOptions{Instruments: []string{"BTC-PERPETUAL", "ETH-PERPETUAL"}, Interval: 50 * time.Millisecond})
	served := sidecartest.Serve(t, sidecar.Config{Upstream: ex.URL(), Protocol: "thalex", AllowedOrigins: allowedOrigins, Grace: time.Minute})
	require.Eventually(t, served.Ready, 10*time.Second, 10*time.Millisecond)
	return &rig{ex: ex, sc: served.Server, proxy: newProxy(t, served.Addr)}
}

// A person opening the status page sees the upstream connected, the
// topics listed, and the counters moving.
func TestStatusPage(t *testing.T) {
	r := newRig(t)
	ctx := browser(t)
	// A program subscribes, so the page has topics and a client to show.
	sse, err := http.Get("http://" + r.proxy.addr + "/v1/stream?topic=ticker.BTC-PERPETUAL.raw&topic=ticker.ETH-PERPETUAL.raw&topic=book.BTC-PERPETUAL.none.10.100ms")
	require.NoError(t, err)
	defer sse.Body.Close()

	var state, topics, received1, received2 string
	require.NoError(t, chromedp.Run(ctx,
		chromedp.Navigate("http://"+r.proxy.addr+"/"),
		chromedp.WaitVisible(`//td[text()="ticker.BTC-PERPETUAL.raw"]`),
		chromedp.Text("#state", &state),
		chromedp.Text("#topics", &topics),
		chromedp.Text("#received", &received1),
		chromedp.Sleep(2500*time.Millisecond), // two more status events
		chromedp.Text("#received", &received2),
	))
	assert.Equal(t, "connected", state)
	assert.Contains(t, topics, "ticker.ETH-PERPETUAL.raw")
	assert.Regexp(t, `mid \d+(\.\d+)? · spread \d+(\.\d+)? · 10×10 levels`, topics, "the book's mid, spread and depth")
	assert.NotEqual(t, received1, received2, "the counters move")
	screenshot(t, ctx, "status-page.png")

	// On a phone's screen the tables scroll sideways inside the page;
	// the page itself does not.
	var pageWidth, viewWidth int
	require.NoError(t, chromedp.Run(ctx,
		chromedp.EmulateViewport(390, 844),
		chromedp.Sleep(200*time.Millisecond),
		chromedp.Evaluate(`document.documentElement.scrollWidth`, &pageWidth),
		chromedp.Evaluate(`window.innerWidth`, &viewWidth),
	))
	assert.LessOrEqual(t, pageWidth, viewWidth, "no sideways scrolling of the page on a phone")
	screenshot(t, ctx, "status-page-phone.png")
}

// The status page knows the fifth venue: a sidecar in front of OKX shows
// its topics and the book it keeps, as for any other.
func TestStatusPageOKX(t *testing.T) {
	ex := exchangetest.NewServer(okx.Name)
	t.Cleanup(ex.Close)
	ex.StartFeed(exchangetest.FeedOptions{Instruments: []string{"BTC-USDT"}, Interval: 50 * time.Millisecond})
	served := sidecartest.Serve(t, sidecar.Config{Upstream: ex.URL(), Protocol: okx.Name, Grace: time.Minute})
	require.Eventually(t, served.Ready, 10*time.Second, 10*time.Millisecond)
	sse, err := http.Get("http://" + served.Addr + "/v1/stream?topic=tickers:BTC-USDT&topic=books:BTC-USDT")
	require.NoError(t, err)
	defer sse.Body.Close()

	ctx := browser(t)
	var state, protocol, topics string
	require.NoError(t, chromedp.Run(ctx,
		chromedp.Navigate("http://"+served.Addr+"/"),
		chromedp.WaitVisible(`//td[text()="books:BTC-USDT"]`),
		chromedp.Sleep(1500*time.Millisecond), // a status event with the book
		chromedp.Text("#state", &state),
		chromedp.Text("body", &protocol),
		chromedp.Text("#topics", &topics),
	))
	assert.Equal(t, "connected", state)
	assert.Contains(t, protocol, "okx")
	assert.Contains(t, topics, "tickers:BTC-USDT")
	assert.Regexp(t, `mid \d+(\.\d+)? · spread \d+(\.\d+)? · \d+×\d+ levels`, topics, "the book's mid, spread and depth")
	screenshot(t, ctx, "status-page-okx.png")
}

// A person opening the status page of a sidecar whose upstream cannot be
// reached sees why (the last error and the attempts), and the topics it
// offers with a line to copy for each.
func TestStatusPageExplainsUnreachableUpstream(t *testing.T) {
	dead, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	upstream := "ws://" + dead.Addr().String() + "/ws"
	require.NoError(t, dead.Close()) // nothing listens there now: every dial is refused
	served := sidecartest.Serve(t, sidecar.Config{Upstream: upstream, Protocol: "thalex",
		Topics: []string{"ticker.BTC-PERPETUAL.raw", "book.BTC-PERPETUAL.none.10.100ms"}})
	ctx := browser(t)

	var trouble, offered string
	require.NoError(t, chromedp.Run(ctx,
		chromedp.Navigate("http://"+served.Addr+"/"),
		chromedp.WaitVisible(`#trouble`),
		chromedp.WaitVisible(`//code[text()="ticker.BTC-PERPETUAL.raw"]`),
		chromedp.Text("#trouble", &trouble),
		chromedp.Text("#offered", &offered),
	))
	assert.Contains(t, trouble, "connection refused", "the last dial error")
	assert.Regexp(t, `\d+ attempts?`, trouble)
	assert.Contains(t, offered, "curl -N 'http://"+served.Addr+"/v1/stream?topic=ticker.BTC-PERPETUAL.raw'")
	assert.Contains(t, offered, `"method":"public/subscribe"`, "Thalex's own subscribe frame")
	screenshot(t, ctx, "status-page-unreachable.png")
}

// A page on another origin, allowed by the sidecar, receives a topic with
// EventSource.onmessage; when the connection is cut, EventSource comes
// back with Last-Event-ID and the page misses nothing.
func TestEventSourcePageResumes(t *testing.T) {
	page := http.FileServer(http.Dir("../examples/browser"))
	pages := httptest.NewServer(page)
	t.Cleanup(pages.Close)
	r := newRig(t, pages.URL)
	ctx := browser(t)
	const topic = "ticker.TEST.raw"

	url := fmt.Sprintf("%s/index.html?sidecar=http://%s&topic=%s", pages.URL, r.proxy.addr, topic)
	require.NoError(t, chromedp.Run(ctx,
		chromedp.Navigate(url),
		chromedp.WaitVisible(`//span[@id="state" and text()="live"]`),
	))
	require.NoError(t, r.ex.WaitSubscribers(context.Background(), topic, 1))

	n := 0
	publish := func(count int) {
		for range count {
			n++
			r.ex.Publish(topic, fmt.Appendf(nil, `{"n":%d}`, n))
			time.Sleep(10 * time.Millisecond)
		}
	}
	publish(10)
	waitReceived(t, ctx, 10)
	r.proxy.cut() // the stream drops; EventSource retries after the sidecar's retry hint
	publish(10)   // missed while away, kept by the sidecar's history
	r.proxy.heal()
	publish(5)
	got := waitReceived(t, ctx, 25)

	var ns []int
	for _, m := range got {
		require.False(t, m.Gap, "no gap: the history held what was missed")
		var v struct{ N int }
		require.NoError(t, json.Unmarshal(m.Data, &v))
		ns = append(ns, v.N)
	}
	want := make([]int, 25)
	for i := range want {
		want[i] = i + 1
	}
	assert.Equal(t, want, ns, "every message once, in order, across the cut")
	assert.GreaterOrEqual(t, r.proxy.connections(), 2, "EventSource came back on a new connection")
	screenshot(t, ctx, "eventsource-page.png")
}

// received is what the example page recorded of one message.
type received struct {
	ID    string          `json:"id"`
	Topic string          `json:"topic"`
	Data  json.RawMessage `json:"data"`
	Gap   bool            `json:"gap"`
}

// waitReceived waits until the page has recorded n messages and returns
// them.
func waitReceived(t *testing.T, ctx context.Context, n int) []received {
	t.Helper()
	var got []received
	deadline := time.Now().Add(20 * time.Second)
	for {
		var raw string
		require.NoError(t, chromedp.Run(ctx, chromedp.Evaluate(`JSON.stringify(window.received)`, &raw)))
		require.NoError(t, json.Unmarshal([]byte(raw), &got))
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("the page received %d of %d messages: %s", len(got), n, strings.TrimSpace(raw))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// proxy is a loopback TCP proxy that can cut every connection and refuse
// new ones until healed.
type proxy struct {
	addr   string
	target string
	l      net.Listener

	mu       sync.Mutex
	cutOf    bool
	conns    map[net.Conn]struct{}
	accepted int
	wg       sync.WaitGroup
}

func newProxy(t *testing.T, target string) *proxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &proxy{addr: l.Addr().String(), target: target, l: l, conns: make(map[net.Conn]struct{})}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(func() {
		_ = l.Close()
		p.cut()
		p.wg.Wait()
	})
	return p
}

func (p *proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.l.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.cutOf {
			p.mu.Unlock()
			_ = c.Close()
			continue
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			p.mu.Unlock()
			_ = c.Close()
			continue
		}
		p.conns[c], p.conns[up] = struct{}{}, struct{}{}
		p.accepted++
		p.wg.Add(2)
		go p.pipe(c, up)
		go p.pipe(up, c)
		p.mu.Unlock()
	}
}

func (p *proxy) pipe(dst, src net.Conn) {
	defer p.wg.Done()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				break
			}
		}
		if err != nil {
			break
		}
	}
	_ = dst.Close()
	_ = src.Close()
}

// connections returns how many connections the proxy has carried.
func (p *proxy) connections() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.accepted
}

// cut closes every proxied connection and refuses new ones until heal.
func (p *proxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cutOf = true
	for c := range p.conns {
		_ = c.Close()
	}
	clear(p.conns)
}

func (p *proxy) heal() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cutOf = false
}

// The example page opened as a file has the origin "null": a sidecar
// that does not allow it refuses the stream, and the page shows why
// (naming -allowed-origins and "null") instead of "reconnecting…"; with
// -allowed-origins null it streams.
func TestEventSourcePageAsAFile(t *testing.T) {
	page, err := filepath.Abs("../examples/browser/index.html")
	require.NoError(t, err)
	const topic = "ticker.TEST.raw"
	for _, allowed := range [][]string{nil, {"null"}} {
		r := newRig(t, allowed...)
		ctx := browser(t)
		url := fmt.Sprintf("file://%s?sidecar=http://%s&topic=%s", page, r.proxy.addr, topic)
		if allowed == nil {
			var state string
			require.NoError(t, chromedp.Run(ctx,
				chromedp.Navigate(url),
				chromedp.WaitVisible(`//span[@id="state" and starts-with(text(), "refused: ")]`),
				chromedp.Text(`#state`, &state),
			))
			assert.Contains(t, state, `origin "null" is not allowed`)
			assert.Contains(t, state, "-allowed-origins")
			screenshot(t, ctx, "eventsource-page-refused.png")
			continue
		}
		require.NoError(t, chromedp.Run(ctx,
			chromedp.Navigate(url),
			chromedp.WaitVisible(`//span[@id="state" and text()="live"]`),
		))
		require.NoError(t, r.ex.WaitSubscribers(context.Background(), topic, 1))
		r.ex.Publish(topic, []byte(`{"n":1}`))
		waitReceived(t, ctx, 1)
	}
}
