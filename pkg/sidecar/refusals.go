package sidecar

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/wsfan/wsfan/internal/format"
	"github.com/wsfan/wsfan/pkg/natsbridge"
)

// keptRefusals is how many refused subscribes /v1/status shows.
const keptRefusals = 20

// Refusal is a local subscribe the sidecar refused, as /v1/status shows
// it.
type Refusal struct {
	Time   time.Time `json:"time"`
	Client uint64    `json:"client"` // the client's number (ClientStatus.ID)
	Remote string    `json:"remote"` // the client's address
	Kind   string    `json:"kind"`   // ws or sse
	Topics []string  `json:"topics"` // the topics refused
	Reason string    `json:"reason"` // why, as the client was told
}

// refusals keeps the last keptRefusals refusals, oldest first. It is safe
// for concurrent use; the zero value is ready.
type refusals struct {
	mu   sync.Mutex
	last []Refusal
}

// add records r, dropping the oldest beyond keptRefusals.
func (rs *refusals) add(r Refusal) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if len(rs.last) == keptRefusals {
		rs.last = slices.Delete(rs.last, 0, 1)
	}
	rs.last = append(rs.last, r)
}

// list returns the refusals, newest first.
func (rs *refusals) list() []Refusal {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	out := slices.Clone(rs.last)
	slices.Reverse(out)
	return out
}

// Refusal reasons, the "reason" label of wsfan_sidecar_refusals_total:
// why a local subscribe (or a batch) was refused.
const (
	refusalUnknownTopic  = iota // not a topic of the dialect, not offered, too long
	refusalTooManyTopics        // past Config.MaxTopicsPerClient
	refusalMaxTopics            // past Config.MaxTopics
	refusalBatchTooLarge        // a batch longer than Config.MaxBatch
	refusalUpstream             // the upstream refused or failed it
	refusalTimeout              // the upstream did not answer within Config.RequestTimeout
	refusalClientLeft           // the client left before the upstream answered
	refusalClosing              // the sidecar is closing
	refusalReasons
)

var refusalReasonNames = [refusalReasons]string{"unknown_topic", "too_many_topics", "max_topics",
	"batch_too_large", "upstream", "upstream_timeout", "client_left", "closing"}

// Errors of refusals the sidecar makes itself: errTooManyTopics (see
// subscribe.go) and errUnknownTopic (refusal.go) beside these.
var (
	errClientLeft    = errors.New("the client left before the upstream answered")
	errBatchTooLarge = errors.New("batch too large")
)

// maxTopicsError refuses a subscribe past Config.MaxTopics, its value.
type maxTopicsError int

func (e maxTopicsError) Error() string {
	return fmt.Sprintf("the limit of %d upstream topics is reached", int(e))
}

// refusalReason is the reason label of err, a refusal of a subscribe.
func refusalReason(err error) int {
	switch {
	case errors.Is(err, errClientLeft):
		return refusalClientLeft
	case errors.Is(err, errBatchTooLarge):
		return refusalBatchTooLarge
	case errors.Is(err, errTooManyTopics):
		return refusalTooManyTopics
	case errors.As(err, new(maxTopicsError)):
		return refusalMaxTopics
	case errors.Is(err, ErrClosed), errors.Is(err, natsbridge.ErrClosed):
		return refusalClosing
	case errors.Is(err, context.DeadlineExceeded):
		return refusalTimeout
	case errors.Is(err, errUnknownTopic):
		return refusalUnknownTopic
	}
	return refusalUpstream
}

// refusalLogEvery is how often one client's refusals are logged at most:
// a refusal within it of the client's last logged one is only counted
// (wsfan_sidecar_refusal_logs_suppressed_total), and the next line says
// how many were not logged.
const refusalLogEvery = time.Second

// refusalLog paces one session's refusal lines. It is safe for
// concurrent use (a WebSocket session's subscription goroutine and its
// reader both refuse); the zero value is ready.
type refusalLog struct {
	mu         sync.Mutex
	last       time.Time // when a line was last logged
	suppressed int       // refusals not logged since
}

// next reports whether a refusal at now is logged, and how many were
// not logged before it.
func (l *refusalLog) next(now time.Time) (log bool, suppressed int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.last.IsZero() && now.Sub(l.last) < refusalLogEvery {
		l.suppressed++
		return false, 0
	}
	suppressed, l.last, l.suppressed = l.suppressed, now, 0
	return true, suppressed
}

// refused counts, records and logs that s was refused topics for err.
// One request is one line, whatever its size: the client, how many
// topics and the first few (shownTopics), and the reason, whose own
// size is bounded (topicRefusals); at most one line every
// refusalLogEvery a client, the rest counted. A client that left before
// the upstream answered was not refused anything: it is logged at debug.
func (h *hub) refused(s *session, topics []string, err error) {
	reason := refusalReason(err)
	h.stats.refusals[reason].Add(1)
	if reason == refusalClientLeft {
		h.log.Debug("local client left before its subscribe was answered", zap.Uint64("client", s.id),
			zap.String("remote", s.remote), zap.Int("topics", len(topics)))
		return
	}
	shown := shownTopics(topics)
	h.refusals.add(Refusal{Time: time.Now(), Client: s.id, Remote: s.remote, Kind: s.kind.String(), Topics: shown, Reason: err.Error()})
	log, suppressed := s.refusalLog.next(time.Now())
	if !log {
		h.stats.refusalLogsSuppressed.Add(1)
		return
	}
	fields := []zap.Field{zap.Uint64("client", s.id), zap.String("remote", s.remote),
		zap.Stringer("kind", s.kind), zap.Int("count", len(topics)), zap.Strings("topics", shown),
		zap.String("reason", refusalReasonNames[reason]), zap.Error(err)}
	if suppressed > 0 {
		fields = append(fields, zap.Int("not_logged_before", suppressed))
	}
	h.log.Warn("subscribe refused", fields...)
}

// shownReasons is how many refused names' reasons a topicRefusals
// spells out.
const shownReasons = 3

// refusedTopics sums up why names of one request are not topics: how
// many, and the first shownReasons reasons. Its error's size is bounded
// whatever the request's, where joining one error a name made an answer
// (and a log line) as long as the request and quadratic to build. The
// zero value is ready.
type refusedTopics struct {
	n     int
	first []error
}

// add counts one refused name and keeps its reason if among the first.
func (e *refusedTopics) add(err error) {
	e.n++
	if len(e.first) < shownReasons {
		e.first = append(e.first, err)
	}
}

// err is the refusals as one error, nil for none; errors.Is finds
// errUnknownTopic in it.
func (e *refusedTopics) err() error {
	if e.n == 0 {
		return nil
	}
	return e
}

func (e *refusedTopics) Error() string {
	var b strings.Builder
	for i, err := range e.first {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(err.Error())
	}
	if more := e.n - len(e.first); more > 0 {
		fmt.Fprintf(&b, "; and %d more topics refused", more)
	}
	return b.String()
}

// Unwrap returns the reasons spelled out.
func (e *refusedTopics) Unwrap() []error { return e.first }

// Bounds on how topics a client sent are repeated in answers, logs and
// the status: a refused request may carry a frame's worth of names.
const (
	shownTopicBytes = 120 // of one name
	shownTopicCount = 12  // names, then how many more
)

// shownTopics returns topics as answers, logs and the status repeat them:
// at most shownTopicCount names, each cut to shownTopicBytes (with its
// size), and a last entry saying how many more there were.
func shownTopics(topics []string) []string {
	n := min(len(topics), shownTopicCount)
	shown := make([]string, 0, n+1)
	for _, t := range topics[:n] {
		if len(t) > shownTopicBytes {
			t = fmt.Sprintf("%s… (%d bytes)", strings.ToValidUTF8(t[:shownTopicBytes], ""), len(t))
		}
		shown = append(shown, t)
	}
	if more := len(topics) - n; more > 0 {
		shown = append(shown, fmt.Sprintf("… and %d more", more))
	}
	return shown
}

// subscribeError is why a local subscribe of topics failed, as the
// client is answered: the topics (shortened) then err, unless err names
// every one of them already (the upstream client's errors do), so that
// no topic is named twice.
func subscribeError(topics []string, err error) error {
	msg := err.Error()
	named := len(topics) <= shownTopicCount
	for _, t := range topics {
		if !named || len(t) > shownTopicBytes || !strings.Contains(msg, strconv.Quote(t)) {
			named = false
			break
		}
	}
	if named {
		return err
	}
	return fmt.Errorf("failed to subscribe %s: %w", format.QuotedList(shownTopics(topics)), err)
}
