package sidecar

import "sync"

// mostLogged bounds the keys a logOnce remembers: a caller making up a
// new key every request gets a line per key up to this many, then one
// line saying the rest are only counted.
const mostLogged = 256

// logOnce decides which refusals to log: the first of each key (a host, a
// remote address), up to mostLogged keys. It is safe for concurrent use;
// the zero value is ready.
type logOnce struct {
	mu     sync.Mutex
	logged map[string]bool
	full   bool // the line saying the rest are not logged was logged
}

// first reports whether key is new and should be logged (logKey), and
// whether the bound was just reached and should be said once (logFull).
func (l *logOnce) first(key string) (logKey, logFull bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.logged == nil {
		l.logged = make(map[string]bool)
	}
	if l.logged[key] {
		return false, false
	}
	if len(l.logged) < mostLogged {
		l.logged[key] = true
		return true, false
	}
	if !l.full {
		l.full = true
		return false, true
	}
	return false, false
}
