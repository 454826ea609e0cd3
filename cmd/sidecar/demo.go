package main

import (
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/wsfan/wsfan/pkg/book"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/sidecar"
)

// demoUpstream is the simulated exchange -demo runs the sidecar against:
// an exchangetest server on 127.0.0.1 publishing a realistic feed.
type demoUpstream struct {
	srv *exchangetest.Server
}

func startDemo(protocol string) (*demoUpstream, error) {
	d, err := exchangetest.ParseDialect(protocol)
	if err != nil {
		return nil, err
	}
	// The exchange's own feed, on its default instruments; the server
	// answers the exchange's public methods the README and the examples
	// call (the instrument list, the server time, an Ethereum node's chain
	// id and block number). The demo knows its feed's topics only, as an
	// exchange knows its instruments: a typo is refused, not subscribed
	// to silence.
	var feed exchangetest.FeedOptions
	srv := exchangetest.NewServer(d, exchangetest.WithTopics(exchangetest.FeedTopicsOf(d, feed)...))
	srv.StartFeed(feed)
	return &demoUpstream{srv: srv}, nil
}

func (d *demoUpstream) url() string { return d.srv.URL() }

// topics are the topics the demo exchange publishes and knows.
func (d *demoUpstream) topics() []string { return d.srv.FeedTopics() }

func (d *demoUpstream) close() { d.srv.Close() }

// configure points cfg at the demo's exchange and, when cfg offers no
// topics, offers the feed's: at start and at each reload.
func (d *demoUpstream) configure(cfg *sidecar.Config) {
	cfg.Upstream = d.url()
	if len(cfg.Topics) == 0 {
		cfg.Topics = d.topics()
	}
}

// subscribeFrame is what a program sends the sidecar to subscribe topic,
// encoded by the dialect's client half.
func subscribeFrame(dialect exchangetest.Dialect, topic string) string {
	p, err := protocol.ByName(string(dialect))
	if err != nil {
		return ""
	}
	frame, _ := protocol.SubscribeFrame(p, topic)
	return frame
}

// printHelp tells a new user what to try next. addr is where the sidecar
// is reached (dialAddr). Every command is printed ready to paste into a
// shell: an argument holding a character a shell would read (the ? of a
// query, which zsh expands as a pattern) is single-quoted.
func (d *demoUpstream) printHelp(w io.Writer, addr, token string) {
	topics := d.srv.FeedTopics()
	topic := topics[0]
	base := "http://" + addr
	ws := "ws://" + addr + "/ws"
	auth := ""
	if token != "" {
		ws += "?token=" + url.QueryEscape(token)
		auth = " -H " + shellQuote("Authorization: Bearer "+token)
	}
	_, _ = fmt.Fprintf(w, `
wsfan sidecar demo: a simulated %[1]s exchange (upstream %[2]s)
is publishing %[3]s, and the sidecar serves it on %[4]s.

  Open the status page in a browser: %[6]s/%[13]s

  Stream a topic as Server-Sent Events:
    curl -N%[5]s %[7]s

  Speak the exchange's own protocol over WebSocket, with Go alone (or
  websocat, wscat), then paste the subscribe frame:
    go run ./cmd/wscat %[10]s%[14]s
    %[9]s

  Or run the SDK's example program against it:
    go run ./examples/ticker -url %[14]s -protocol %[1]s -topics %[11]s

%[12]s  Look inside:
    curl -s%[5]s %[15]s
    curl -s%[5]s %[16]s | grep ^wsfan_sidecar

  Point a program at %[8]s instead of the exchange's URL:
  it gets the same frames, over one shared upstream connection.

Press Ctrl+C to stop.

`, d.srv.Dialect(), d.srv.URL(), strings.Join(topics, ", "), addr,
		auth, base, shellQuote(base+"/v1/stream?topic="+url.QueryEscape(topic)), ws,
		subscribeFrame(d.srv.Dialect(), topic), wscatAuth(token), shellQuote(topic),
		d.bookHelp(base, auth), pageToken(token), shellQuote(ws),
		shellQuote(base+"/v1/status"), shellQuote(base+"/metrics"))
}

// dialAddr is where a program on this machine reaches a listener at addr:
// an unspecified address (-listen 0.0.0.0:8765 or :8765, which Go reports
// as [::]:8765) at 127.0.0.1 and the same port, any other as it is.
func dialAddr(addr net.Addr) string {
	if a, ok := addr.(*net.TCPAddr); ok && a.IP.IsUnspecified() {
		return net.JoinHostPort("127.0.0.1", strconv.Itoa(a.Port))
	}
	return addr.String()
}

// shellQuote is s as one word of a POSIX shell (or zsh) command line: as
// it is when every byte is one no shell reads specially, else in single
// quotes, where each ' ends the quotes, is written \' and opens them
// again. The safe set is the one Python's shlex.quote leaves bare.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("@%+=:,./_-", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// pageToken is the status page's query for token: a browser sends no
// header of its own.
func pageToken(token string) string {
	if token == "" {
		return ""
	}
	return "?token=" + url.QueryEscape(token)
}

// bookHelp is the banner's paragraph on the books the sidecar keeps, or
// nothing when the demo's exchange publishes none.
func (d *demoUpstream) bookHelp(base, auth string) string {
	for _, topic := range d.srv.FeedTopics() {
		if book.RulesFor(string(d.srv.Dialect()), topic) == nil {
			continue
		}
		for _, inst := range d.srv.FeedInstruments() {
			if strings.Contains(topic, inst) {
				return fmt.Sprintf("  Read an order book the sidecar keeps (JSON; /v1/book/stream streams it):\n"+
					"    curl -s%s %s\n\n", auth, shellQuote(base+"/v1/book?instrument="+url.QueryEscape(inst)))
			}
		}
	}
	return ""
}

// wscatAuth is cmd/wscat's header flag for token, or nothing.
func wscatAuth(token string) string {
	if token == "" {
		return ""
	}
	return "-H " + shellQuote("Authorization: Bearer "+token) + " "
}
