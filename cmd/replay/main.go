// Command replay serves a recording (pkg/record, a sidecar's -record DIR)
// as the venue it was recorded from, so that an unchanged program — the
// SDK, a sidecar, a script — changes only host and port:
//
//	go run ./cmd/replay -dir DIR [-listen ADDR] [-speed 1|N|max] [-from T] [-to T]
//	go run ./cmd/replay -dir DIR -inspect
//	go run ./cmd/replay -dir DIR -export ndjson [-from T] [-to T] > window.ndjson
//
// It answers subscribes, logins (any is accepted) and heartbeats as the
// venue's test exchange does (pkg/exchangetest), on every path; refuses
// a topic never subscribed in the recording as the venue refuses an
// unknown channel; answers a call with its recorded result when the same
// call was recorded, else with an error saying so. The first subscribe
// starts the replay clock, shared by every connection; each recorded
// notification goes, verbatim, to the connections subscribed to its
// topic, at its recorded offset divided by -speed (max: as fast as they
// read), from -settle after the first subscribe; one that came with a
// hole's flags (a recorded reconnect, gap, stale topic, backfill) gets
// the gap notice the recorded sidecar sent before it, and a standby's
// legs, each recorded, play once. docs/record-replay.md has a worked
// example.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	_ "github.com/wsfan/wsfan/pkg/exchanges" // every venue a recording may be of
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/record"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "replay:", err)
		os.Exit(1)
	}
}

// run is the command, its output written to out.
func run(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	dir := fs.String("dir", "", "the recording's `directory` (required)")
	listen := fs.String("listen", "127.0.0.1:8766", "`address` to serve the venue on")
	speed := fs.String("speed", "1", "`pace`: 1 as recorded, N times faster, or max")
	settle := fs.Duration("settle", 250*time.Millisecond, "`wait` between the first subscribe and the first frame, for the program's other subscribes\n(and, behind a sidecar, its local clients) to be in place")
	from := fs.String("from", "", "first `time` to replay: RFC 3339 (to the millisecond or finer) or unix milliseconds")
	to := fs.String("to", "", "`time` to stop before, as -from")
	inspect := fs.Bool("inspect", false, "print the manifest and exit")
	export := fs.String("export", "", "write the window as `ndjson` (receive time, topic, frame) to stdout and exit")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dir == "" {
		return errors.New("name the recording: -dir DIR")
	}
	var w record.Window
	var err error
	if w.From, err = parseTime(*from); err != nil {
		return fmt.Errorf("-from: %w", err)
	}
	if w.To, err = parseTime(*to); err != nil {
		return fmt.Errorf("-to: %w", err)
	}
	switch {
	case *inspect:
		m, err := record.ReadManifest(*dir)
		if err != nil {
			return err
		}
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(m)
	case *export == "ndjson":
		return exportNDJSON(*dir, w, out)
	case *export != "":
		return fmt.Errorf("-export %q: want ndjson", *export)
	}
	pace, err := parseSpeed(*speed)
	if err != nil {
		return err
	}
	rec, err := load(*dir, w)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return serve(ctx, rec, *listen, pace, *settle, out)
}

// serve replays rec on listen until it is played or ctx ends.
func serve(ctx context.Context, rec *recording, listen string, pace float64, settle time.Duration, out io.Writer) error {
	srv := exchangetest.NewServer(exchangetest.Dialect(rec.venue), exchangetest.WithAddr(listen), exchangetest.WithTopics(rec.topics...))
	defer srv.Close()
	rec.serveCalls(srv)
	_, _ = fmt.Fprintf(out, "replaying %d %s notifications of %d topics on %s (ws://%s/ws, or the venue's own paths); waiting for a subscribe\n",
		rec.count, rec.venue, len(rec.topics), srv.Addr(), srv.Addr())
	n, err := rec.play(ctx, srv, pace, settle)
	_, _ = fmt.Fprintf(out, "replayed %d notifications\n", n)
	if err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	<-ctx.Done() // the programs keep their connections until they leave
	return nil
}

// parseSpeed reads -speed: 1, N (a positive factor), or max (0).
func parseSpeed(s string) (float64, error) {
	if s == "max" {
		return 0, nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v <= 0 {
		return 0, fmt.Errorf("-speed %q: want 1, a positive factor, or max", s)
	}
	return v, nil
}

// parseTime reads a window bound: RFC 3339 or unix milliseconds; "" is
// open.
func parseTime(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil {
		return time.UnixMilli(ms), nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return t, fmt.Errorf("%q: want RFC 3339 (2026-11-27T18:00:00.250Z) or unix milliseconds", s)
	}
	return t, nil
}

// exportNDJSON writes each received record of the window as a line:
// {"time":…,"topic":…,"frame":…}.
func exportNDJSON(dir string, w record.Window, out io.Writer) error {
	bw := bufio.NewWriter(out)
	enc := json.NewEncoder(bw)
	_, err := record.Read(dir, w, func(r *record.Record) error {
		if r.Dir != record.Received {
			return nil
		}
		frame := json.RawMessage(r.Frame)
		if !json.Valid(frame) {
			b, _ := json.Marshal(string(r.Frame))
			frame = b
		}
		return enc.Encode(struct {
			Time  time.Time       `json:"time"`
			Topic string          `json:"topic,omitempty"`
			Frame json.RawMessage `json:"frame"`
		}{r.Time, r.Topic, frame})
	})
	if err != nil {
		return err
	}
	return bw.Flush()
}
