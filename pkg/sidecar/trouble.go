package sidecar

import (
	"sync"
	"time"
)

// trouble is what the status says of a source that is not connected:
// its last error, the attempts since it was last up, and when it tries
// again. It is safe for concurrent use; the zero value is ready.
type trouble struct {
	mu        sync.Mutex
	lastError string
	at        time.Time
	attempts  int
	next      time.Time
}

// failed records a failure (a dial, a lost connection); attempt is the
// attempt it ended (0: not an attempt) and retry when the next one comes
// (zero: not known).
func (t *trouble) failed(err error, attempt int, retry time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err != nil {
		t.lastError, t.at = err.Error(), time.Now()
	}
	if attempt > 0 {
		t.attempts = attempt
	}
	t.next = retry
}

// up records that the source is connected again: attempts start over,
// the last error is kept for the record.
func (t *trouble) up() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.attempts, t.next = 0, time.Time{}
}

// fill writes the record into st.
func (t *trouble) fill(st *UpstreamStatus) {
	t.mu.Lock()
	defer t.mu.Unlock()
	st.LastError, st.Attempts = t.lastError, t.attempts
	if !t.at.IsZero() {
		at := t.at
		st.LastErrorAt = &at
	}
	if !t.next.IsZero() {
		next := t.next
		st.NextRetry = &next
	}
}

// describe says why the source is not connected, for an error: the last
// failure, or that the first dial is under way.
func (t *trouble) describe() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.lastError == "" {
		return "the first dial is under way"
	}
	return "last failure: " + t.lastError
}
