// Package redact removes credentials from what wsfan shows: its logs, its
// errors, the sidecar's status and page. A node provider's key lives in the
// URL's path (/v3/<key>) or query (?apikey=), and a URL may carry
// user:password@; none of them may leave the process through a log line.
package redact

import (
	"net/url"
	"strings"
)

// Mark replaces every value redact takes out.
const Mark = "REDACTED"

// shortestSecret is the length from which a path segment may be a key:
// provider keys are 32 hex characters or longer base58/base62 strings, and
// path words such as "ws", "api" or "v2" are far shorter.
const shortestSecret = 16

// URL returns raw with its credentials replaced, keeping what tells
// endpoints apart (scheme, host and port, the path's shape, the query's
// keys):
//
//   - the userinfo (user:password@) is removed;
//   - every query value is replaced by Mark, the keys are kept;
//   - every path segment that looks like a credential (see Secret), or
//     holds an @, is replaced by Mark;
//   - the fragment is removed.
//
// A string that does not parse as an absolute URL with a host keeps only
// its scheme and host, or is replaced by Mark.
// URL is idempotent.
func URL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Opaque != "" || u.Scheme == "" || u.Host == "" {
		if v, err := url.Parse("ws://" + raw); err == nil && v.Host != "" && !strings.Contains(raw, "://") {
			// A URL written without its scheme (thalex.com/ws/api/v2,
			// 127.0.0.1:8765): shown as the URL it would be with one, so
			// the mistake can be seen, its secrets still hidden.
			return strings.TrimPrefix(URL("ws://"+raw), "ws://")
		}
		return schemeAndHost(raw)
	}
	var b strings.Builder
	b.Grow(len(raw))
	b.WriteString(u.Scheme + "://" + u.Host)
	for i, seg := range strings.Split(u.EscapedPath(), "/") {
		if i > 0 {
			b.WriteByte('/')
		}
		if Secret(seg) || strings.Contains(seg, "@") { // user:password@ out of place
			seg = Mark
		}
		b.WriteString(seg)
	}
	if u.RawQuery != "" || u.ForceQuery {
		b.WriteByte('?')
		for i, pair := range strings.Split(u.RawQuery, "&") {
			if i > 0 {
				b.WriteByte('&')
			}
			key, _, hasValue := strings.Cut(pair, "=")
			if Secret(key) {
				key = Mark // a key passed as a bare query word (?<key>)
			}
			b.WriteString(key)
			if hasValue {
				b.WriteString("=" + Mark)
			}
		}
	}
	return b.String()
}

// Secret reports whether a path segment looks like a credential: at least
// 16 characters of the alphabets keys are written in (hex, base58,
// base62, base64 with its URL-safe and padding characters, UUIDs), with
// both letters and digits, as random keys of that length almost always
// have and path words almost never do.
func Secret(seg string) bool {
	if len(seg) < shortestSecret {
		return false
	}
	var letters, digits bool
	for i := 0; i < len(seg); i++ {
		switch c := seg[i]; {
		case c >= '0' && c <= '9':
			digits = true
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
			letters = true
		case c == '-', c == '_', c == '.', c == '~', c == '+', c == '=', c == '%':
		default:
			return false
		}
	}
	return letters && digits
}

// schemeAndHost is what is shown of a string url.Parse refuses: its scheme
// and host, without the userinfo, and a Mark for the rest.
func schemeAndHost(raw string) string {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok || strings.ContainsAny(scheme, "/?#@ ") {
		return Mark
	}
	authority := rest
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		authority = rest[:i]
	}
	if i := strings.LastIndexByte(authority, '@'); i >= 0 {
		authority = authority[i+1:]
	}
	return strings.ToLower(scheme) + "://" + authority + "/" + Mark
}
