package sidecar

import (
	"slices"
	"sync"
	"time"

	"go.uber.org/zap"
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
// a refused request, naming the client, the topics and the reason.
func (h *hub) refused(s *session, topics []string, err error) {
	h.log.Warn("subscribe refused", zap.Uint64("client", s.id), zap.String("remote", s.remote),
		zap.Stringer("kind", s.kind), zap.Strings("topics", topics), zap.Error(err))
	h.refusals.add(Refusal{Time: time.Now(), Client: s.id, Remote: s.remote, Kind: s.kind.String(), Topics: topics, Reason: err.Error()})
}
