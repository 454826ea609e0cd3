package sidecar

import (
	"context"
	"errors"
	"slices"
	"strings"
)

// errTooManyTopics is subscribe's answer to a client going over
// Config.MaxTopicsPerClient; the session is closing with the reason.
var errTooManyTopics = errors.New("too many topics")

// subscribe takes a reference on every topic of names the session does
// not hold yet (the hub opens new ones upstream concurrently) and waits
// for them, within ctx and Config.RequestTimeout. It returns the accepted
// names in request order, the topics to hand to attach, and the first
// refusal. A client going over Config.MaxTopicsPerClient is closed with
// the reason and gets errTooManyTopics. Called by the session's reader;
// both transports subscribe through it.
func (s *session) subscribe(ctx context.Context, names []string) (accepted []string, fresh []*topic, err error) {
	// Every limit is checked before anything is reserved: a refused
	// request must cause no upstream traffic.
	seen := make(map[string]bool, len(names))
	var opening []string
	for _, n := range names {
		if seen[n] {
			continue
		}
		seen[n] = true
		if _, ok := s.topics[n]; ok {
			continue
		}
		if verr := s.hub.validate(n); verr != nil {
			err = errors.Join(err, verr)
			continue
		}
		opening = append(opening, n)
	}
	if len(s.topics)+len(opening) > s.cfg.MaxTopicsPerClient {
		s.close(reasonTooManyTopics(s.cfg.MaxTopicsPerClient), true)
		return nil, nil, errTooManyTopics
	}
	fresh, rerr := s.hub.reserve(opening)
	if rerr != nil {
		err = errors.Join(err, rerr)
		s.hub.refused(s, names, err)
		return nil, nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.RequestTimeout)
	defer cancel()
	ok := make(map[string]*topic, len(fresh))
	for _, t := range fresh {
		if werr := s.hub.wait(ctx, t); werr != nil { // wait released it
			if err == nil {
				err = werr
			}
			continue
		}
		ok[t.name] = t
	}
	for _, n := range names {
		if seen[n] && (s.topics[n] != nil || ok[n] != nil) {
			accepted = append(accepted, n)
			seen[n] = false
		}
	}
	fresh = fresh[:0]
	for _, t := range ok {
		fresh = append(fresh, t)
	}
	if err != nil {
		var refused []string
		for _, n := range names {
			if !slices.Contains(accepted, n) && !slices.Contains(refused, n) {
				refused = append(refused, n)
			}
		}
		s.hub.refused(s, refused, err)
	}
	return accepted, fresh, err
}

// attach queues frame (an acknowledgement, or nil) and attaches topics,
// as subscribe returned them, as one step for the topics' pumps: their
// locks are held throughout, so no notification of them precedes the
// acknowledgement, and none published after the client read it is missed.
// Called by the session's reader.
func (s *session) attach(frame []byte, topics []*topic) {
	slices.SortFunc(topics, func(a, b *topic) int { return strings.Compare(a.name, b.name) })
	for i, t := range topics { // lock in name order: pumps hold one lock at a time
		if i == 0 || topics[i-1] != t {
			t.mu.Lock()
		}
	}
	if frame != nil {
		s.reply(frame)
	}
	for i, t := range topics {
		if _, dup := s.topics[t.name]; dup || (i > 0 && topics[i-1] == t) { // asked twice in one batch
			s.hub.release(t)
			continue
		}
		s.topics[t.name] = t
		t.attachLocked(s)
	}
	for i, t := range topics {
		if i == 0 || topics[i-1] != t {
			t.mu.Unlock()
		}
	}
	s.ntopics.Store(int32(len(s.topics)))
}

// unsubscribe leaves the named topics and returns those the session held.
// Called by the session's reader.
func (s *session) unsubscribe(names []string) []string {
	removed := make([]string, 0, len(names))
	for _, n := range names {
		t, ok := s.topics[n]
		if !ok {
			continue
		}
		delete(s.topics, n)
		t.detach(s)
		s.hub.release(t)
		removed = append(removed, n)
	}
	s.ntopics.Store(int32(len(s.topics)))
	return removed
}

// unsubscribeAll leaves every topic. Called by the session's reader, and
// when the session ends.
func (s *session) unsubscribeAll() {
	for name, t := range s.topics {
		t.detach(s)
		s.hub.release(t)
		delete(s.topics, name)
	}
	s.ntopics.Store(0)
}
