package main

import (
	"errors"
	"math"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap/zapcore"

	"github.com/wsfan/wsfan/internal/format"
	"github.com/wsfan/wsfan/internal/redact"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/natsbridge"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// value is a flag.Value that stores what parse makes of a string in *p.
// One parser serves a flag, its WSFAN_* variable and its config file key,
// and its error says what it wants (the caller names the setting and the
// value).
type value[T any] struct {
	p      *T
	parse  func(string) (T, error)
	format func(T) string
}

func (v value[T]) Set(s string) error {
	x, err := v.parse(s)
	if err != nil {
		return err
	}
	*v.p = x
	return nil
}

func (v value[T]) String() string {
	if v.p == nil { // flag.PrintDefaults asks a zero value
		return ""
	}
	return v.format(*v.p)
}

// sizeValue is a byte count: 1048576, 512KiB, 4MiB or 1GiB.
func sizeValue[T int | int64](p *T) value[T] {
	return value[T]{p: p,
		parse: func(s string) (T, error) {
			n, err := parseSize(s)
			if err != nil || int64(T(n)) != n {
				return 0, errors.New("want a byte count such as 1048576, 512KiB, 4MiB or 1GiB")
			}
			return T(n), nil
		},
		format: func(n T) string { return formatSize(int64(n)) }, // 0: the default
	}
}

// sizeUnits are the suffixes parseSize accepts, in binary multiples.
var sizeUnits = []struct {
	suffix string
	shift  uint
}{{"KiB", 10}, {"MiB", 20}, {"GiB", 30}, {"B", 0}}

// parseSize reads a non-negative byte count with an optional unit
// (case-insensitive, a space allowed before it): "4MiB", "4 MiB", "512KiB",
// "1048576". Decimal units (MB) and fractions are refused: a queue bound
// should mean one number.
func parseSize(s string) (int64, error) {
	num, shift := strings.TrimSpace(s), uint(0)
	for _, u := range sizeUnits {
		if len(num) > len(u.suffix) && strings.EqualFold(num[len(num)-len(u.suffix):], u.suffix) {
			num, shift = strings.TrimSpace(num[:len(num)-len(u.suffix)]), u.shift
			break
		}
	}
	n, err := strconv.ParseUint(num, 10, 63)
	if err != nil {
		return 0, err
	}
	if n > math.MaxInt64>>shift {
		return 0, strconv.ErrRange
	}
	return int64(n) << shift, nil
}

// formatSize writes n in the largest unit that divides it: 4MiB, 1000;
// 0 (the default) as nothing.
func formatSize(n int64) string {
	if n == 0 {
		return ""
	}
	for i := len(sizeUnits) - 2; i >= 0; i-- {
		if u := sizeUnits[i]; n > 0 && n%(1<<u.shift) == 0 {
			return strconv.FormatInt(n>>u.shift, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10)
}

// countValue is a non-negative whole number.
func countValue(p *int) value[int] {
	return value[int]{p: p,
		parse: func(s string) (int, error) {
			n, err := strconv.Atoi(strings.TrimSpace(s))
			if err != nil || n < 0 {
				return 0, errors.New("want a whole number, 0 or more")
			}
			return n, nil
		},
		format: func(n int) string {
			if n == 0 { // the default
				return ""
			}
			return strconv.Itoa(n)
		},
	}
}

// rateValue is a non-negative rate in requests a second: 50, 2.5.
func rateValue(p *float64) value[float64] {
	return value[float64]{p: p,
		parse: func(s string) (float64, error) {
			r, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
			if err != nil || !(r >= 0) || math.IsInf(r, 0) {
				return 0, errors.New("want a number of requests a second, 0 or more")
			}
			return r, nil
		},
		format: func(r float64) string {
			if r == 0 { // the default
				return ""
			}
			return strconv.FormatFloat(r, 'g', -1, 64)
		},
	}
}

// sampleValue is a share from 0 to 1: 0.01 keeps one trace in a hundred.
func sampleValue(p *float64) value[float64] {
	return value[float64]{p: p,
		parse: func(s string) (float64, error) {
			r, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
			if err != nil || !(r >= 0 && r <= 1) {
				return 0, errors.New("want a share from 0 to 1, e.g. 0.01 for one trace in a hundred")
			}
			return r, nil
		},
		format: func(r float64) string { return strconv.FormatFloat(r, 'g', -1, 64) },
	}
}

// otlpValue is an OTLP/HTTP collector's URL, http:// or https://; one
// without a path gets the traces path, /v1/traces.
func otlpValue(p *string) value[string] {
	return value[string]{p: p,
		parse: func(s string) (string, error) {
			u, err := url.Parse(strings.TrimSpace(s))
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return "", errors.New("want an OTLP/HTTP URL such as http://localhost:4318")
			}
			if u.Path == "" || u.Path == "/" {
				u.Path = "/v1/traces"
			}
			return u.String(), nil
		},
		format: func(s string) string { return s },
	}
}

// durationValue is a non-negative duration: 5s, 250ms, 1m30s.
func durationValue(p *time.Duration) value[time.Duration] {
	return value[time.Duration]{p: p,
		parse: func(s string) (time.Duration, error) {
			d, err := time.ParseDuration(strings.TrimSpace(s))
			if err != nil || d < 0 {
				return 0, errors.New("want a duration such as 5s, 250ms or 1m30s")
			}
			return d, nil
		},
		format: func(d time.Duration) string {
			if d == 0 {
				return ""
			}
			return d.String()
		},
	}
}

// listValue is a comma-separated list; each use replaces the whole list, so
// a flag overrides a variable instead of adding to it.
func listValue(p *[]string) value[[]string] {
	return value[[]string]{p: p,
		parse: func(s string) ([]string, error) {
			var l []string
			for _, e := range strings.Split(s, ",") {
				if e = strings.TrimSpace(e); e != "" {
					l = append(l, e)
				}
			}
			return l, nil
		},
		format: func(l []string) string { return strings.Join(l, ",") },
	}
}

// stringValue is a string check accepts; want says what it wants.
func stringValue(p *string, want string, check func(string) bool) value[string] {
	return value[string]{p: p,
		parse: func(s string) (string, error) {
			if !check(s) {
				return "", errors.New(want)
			}
			return s, nil
		},
		format: func(s string) string { return s },
	}
}

// natsURLsValue is a comma-separated list of nats:// or tls:// URLs.
func natsURLsValue(p *string) value[string] {
	return stringValue(p, "want nats://host:4222 URLs, comma-separated", func(s string) bool {
		for _, e := range strings.Split(s, ",") {
			u, err := url.Parse(strings.TrimSpace(e))
			if err != nil || (u.Scheme != "nats" && u.Scheme != "tls") || u.Host == "" {
				return false
			}
		}
		return true
	})
}

// groupValue is a NATS group name.
func groupValue(p *string) value[string] {
	return stringValue(p, "want 1-64 of A-Z a-z 0-9 _ -, e.g. deribit-main", func(s string) bool {
		return natsbridge.CheckGroup(s) == nil
	})
}

// fileValue is the path of a file that exists.
func fileValue(p *string) value[string] {
	return stringValue(p, "want an existing file", func(s string) bool {
		_, err := os.Stat(s)
		return err == nil
	})
}

// upstreamsValue is -upstream: a ws:// or wss:// URL, or several,
// comma-separated, in order of preference; the first is Config.Upstream,
// the others Config.Fallbacks. On the command line the flag may also be
// given more than once: each adds its endpoints after the others (after
// args starts the command line's turn); from the file or a variable a
// value replaces what was set before, as every setting does.
type upstreamsValue struct {
	first *string
	more  *[]string
	// args is set once the command line is parsed; seen once it set the
	// flag.
	args, seen bool
}

// Set takes one -upstream value (flag.Value).
func (v *upstreamsValue) Set(s string) error {
	var urls []string
	for _, e := range strings.Split(s, ",") {
		e = strings.TrimSpace(e)
		u, err := url.Parse(e)
		if err != nil || (u.Scheme != "ws" && u.Scheme != "wss") || u.Host == "" {
			return errors.New("want a ws:// or wss:// URL, or several, comma-separated")
		}
		urls = append(urls, e)
	}
	if v.args && v.seen {
		*v.more = append(*v.more, urls...)
		return nil
	}
	*v.first, *v.more = urls[0], nil
	if len(urls) > 1 {
		*v.more = urls[1:]
	}
	v.seen = v.args
	return nil
}

// String lists the endpoints, comma-separated (flag.Value).
func (v *upstreamsValue) String() string {
	if v == nil || v.first == nil {
		return ""
	}
	return strings.Join(append([]string{*v.first}, *v.more...), ",")
}

// headerValue is a comma-separated list of "Name: value" HTTP headers. It
// shows the names only: the values are credentials.
func headerValue(p *http.Header) value[http.Header] {
	return value[http.Header]{p: p,
		parse: func(s string) (http.Header, error) {
			h := make(http.Header)
			for _, e := range strings.Split(s, ",") {
				if e = strings.TrimSpace(e); e == "" {
					continue
				}
				name, v, ok := strings.Cut(e, ":")
				name, v = strings.TrimSpace(name), strings.TrimSpace(v)
				if !ok || !validHeaderName(name) || strings.ContainsAny(v, "\r\n\x00") {
					return nil, errors.New("want Name: value headers, comma-separated, e.g. 'X-Api-Key: KEY'")
				}
				h.Add(name, v)
			}
			return h, nil
		},
		format: func(h http.Header) string {
			names := make([]string, 0, len(h))
			for name := range h {
				names = append(names, name+": "+redact.Mark)
			}
			slices.Sort(names)
			return strings.Join(names, ",")
		},
	}
}

// validHeaderName reports whether s is an HTTP field name (RFC 9110's
// token).
func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

// secretSettings are the flags whose values may hold credentials, and how
// an error shows such a value.
var secretSettings = map[string]func(string) string{
	"upstream":        redact.URL,
	"upstream-header": func(string) string { return redact.Mark },
	"token":           func(string) string { return redact.Mark },
}

// shownValue is a setting's value as an error may show it.
func shownValue(flagName, v string) string {
	if hide := secretSettings[flagName]; hide != nil {
		return hide(v)
	}
	return v
}

// protocolValue is a dialect name protocol.ByName knows.
func protocolValue(p *string) value[string] {
	return stringValue(p, "want "+format.OneOf(protocol.Names()), func(s string) bool {
		_, err := protocol.ByName(s)
		return err == nil
	})
}

// logFormat is the -log-format: console (for people) or json (for log
// shippers).
type logFormat string

const (
	logConsole logFormat = "console"
	logJSON    logFormat = "json"
)

// UnmarshalText accepts console or json.
func (f *logFormat) UnmarshalText(b []byte) error {
	switch logFormat(b) {
	case logConsole, logJSON:
		*f = logFormat(b)
		return nil
	}
	return errors.New("want console or json")
}

// MarshalText returns the format's name.
func (f logFormat) MarshalText() ([]byte, error) { return []byte(f), nil }

// localOverflows are the policies -overflow accepts, the default first:
// those sidecar.Config.Overflow offers a local client.
var localOverflows = []client.OverflowPolicy{client.CloseSubscription, client.DropNewest}

// overflowValue is -overflow: one of localOverflows, by name in any case.
// The SDK's other policies are refused here, saying why, and its
// "default" is not a name a user needs: the default is shown as
// close-subscription.
func overflowValue(p *client.OverflowPolicy) value[client.OverflowPolicy] {
	names := make([]string, len(localOverflows))
	for i, o := range localOverflows {
		names[i] = o.String()
	}
	want := "want " + format.OneOf(names)
	return value[client.OverflowPolicy]{p: p,
		parse: func(s string) (client.OverflowPolicy, error) {
			var o client.OverflowPolicy
			if o.UnmarshalText([]byte(s)) != nil {
				return 0, errors.New(want)
			}
			switch o {
			case client.DropOldest, client.Block:
				return 0, errors.New(want + " (a local client's queue holds answers beside data, and one slow client must not stall the others)")
			case client.DefaultOverflow:
				return 0, errors.New(want)
			}
			return o, nil
		},
		format: func(o client.OverflowPolicy) string {
			if o == client.DefaultOverflow {
				o = localOverflows[0]
			}
			return o.String()
		},
	}
}

// logLevels are the levels -log-level accepts.
var logLevels = []zapcore.Level{zapcore.DebugLevel, zapcore.InfoLevel, zapcore.WarnLevel, zapcore.ErrorLevel}

// levelValue is -log-level: one of logLevels, by name in any case.
func levelValue(p *zapcore.Level) value[zapcore.Level] {
	names := make([]string, len(logLevels))
	for i, l := range logLevels {
		names[i] = l.String()
	}
	want := "want " + format.OneOf(names)
	return value[zapcore.Level]{p: p,
		parse: func(s string) (zapcore.Level, error) {
			var l zapcore.Level
			if l.UnmarshalText([]byte(strings.TrimSpace(s))) != nil || !slices.Contains(logLevels, l) {
				return 0, errors.New(want)
			}
			return l, nil
		},
		format: zapcore.Level.String,
	}
}
