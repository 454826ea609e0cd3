// Command wscat talks to a WebSocket server from a terminal, with Go
// alone: each line typed (or piped) is sent as a text frame, and every
// frame received is printed on its own line. It is the way to try the
// sidecar's WebSocket without installing websocat or wscat:
//
//	go run ./cmd/wscat ws://127.0.0.1:8765/ws
//	{"jsonrpc":"2.0","id":1,"method":"public/subscribe","params":{"channels":["ticker.BTC-PERPETUAL.raw"]}}
//
// -H adds a handshake header (-H 'Authorization: Bearer TOKEN'); -n stops
// after that many frames received. It exits when the server closes the
// connection, at the end of its input once -wait has passed, or on
// Ctrl+C.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/gorilla/websocket"
)

// headers is a repeatable -H flag.
type headers http.Header

func (h headers) String() string { return "" }

func (h headers) Set(s string) error {
	name, value, ok := strings.Cut(s, ":")
	if !ok || strings.TrimSpace(name) == "" {
		return errors.New("want Name: value")
	}
	http.Header(h).Add(strings.TrimSpace(name), strings.TrimSpace(value))
	return nil
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "wscat:", err)
		os.Exit(1)
	}
}

// run connects to the URL in args, sends in's lines and writes the frames
// received to out, one a line.
func run(ctx context.Context, args []string, in io.Reader, out io.Writer) error {
	fs := flag.NewFlagSet("wscat", flag.ContinueOnError)
	h := headers{}
	fs.Var(h, "H", "handshake `header` Name: value (repeatable)")
	count := fs.Int("n", 0, "stop after this many frames received (0: never)")
	wait := fs.Duration("wait", 0, "keep reading this long after the input ends (0: until the server closes)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("usage: wscat [-H 'Name: value'] [-n frames] ws://HOST:PORT/PATH")
	}
	ws, resp, err := websocket.DefaultDialer.DialContext(ctx, fs.Arg(0), http.Header(h))
	if err != nil {
		if resp != nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 2048))
			return fmt.Errorf("%w: HTTP %s: %s", err, resp.Status, strings.TrimSpace(string(body)))
		}
		return err
	}
	defer func() { _ = ws.Close() }()
	context.AfterFunc(ctx, func() { _ = ws.Close() })

	// The input goroutine sends lines; the reader below owns out.
	inputDone := make(chan struct{})
	go func() {
		defer close(inputDone)
		sc := bufio.NewScanner(in)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if line := strings.TrimSpace(sc.Text()); line != "" {
				if ws.WriteMessage(websocket.TextMessage, []byte(line)) != nil {
					return
				}
			}
		}
	}()
	go func() {
		<-inputDone
		if *wait > 0 {
			time.Sleep(*wait)
			_ = ws.Close()
		}
	}()
	for n := 0; *count == 0 || n < *count; n++ {
		_, msg, err := ws.ReadMessage()
		if err != nil {
			var ce *websocket.CloseError
			if errors.As(err, &ce) {
				// Why the server closed is worth seeing: a sidecar says
				// "slow consumer", "too many topics"...
				_, werr := fmt.Fprintf(out, "closed by the server: %d %s\n", ce.Code, ce.Text)
				return werr
			}
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return nil
			}
			return err
		}
		if _, err := fmt.Fprintln(out, string(msg)); err != nil {
			return err
		}
	}
	return nil
}
