package sidecar

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/wsfan/wsfan/internal/format"
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

// refused logs and records that s was refused topics for err: one WARN
// a refused request, naming the client, the topics (as shownTopics
// shortens them) and the reason.
func (h *hub) refused(s *session, topics []string, err error) {
	shown := shownTopics(topics)
	h.log.Warn("subscribe refused", zap.Uint64("client", s.id), zap.String("remote", s.remote),
		zap.Stringer("kind", s.kind), zap.Strings("topics", shown), zap.Error(err))
	h.refusals.add(Refusal{Time: time.Now(), Client: s.id, Remote: s.remote, Kind: s.kind.String(), Topics: shown, Reason: err.Error()})
}

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
