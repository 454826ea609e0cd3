package main

import (
	"bytes"
	"slices"

	"github.com/zeebo/xxh3"
)

// A standby (pkg/standby) records every leg: each notification is in the
// recording once per leg that read it, and the program got it once, from
// the first leg to read it. copies picks those first arrivals out of a
// recording, by the rule the standby merged its legs by where a venue
// sends the same bytes on every connection: a frame is played when the
// leg (the recorded Client) that read it has now read those bytes more
// times than they were played, and is a copy otherwise. A recording of
// one Client plays every frame. It is owned by load.

// copyWindow is how many frames of a topic copies remembers, as the
// standby remembers a subscription's last standby.Window identities:
// a leg further behind than that plays its frames again.
const copyWindow = 4096

// copies is the first-arrival filter of a recording's notifications.
type copies struct {
	topics map[string]*topicCopies
}

// topicCopies is what copies remembers of one topic.
type topicCopies struct {
	seen  map[xxh3.Uint128]*copyCount
	order []xxh3.Uint128 // seen's keys in a ring, at most copyWindow
	next  int            // order's oldest once it is full
}

// copyCount counts one frame's readings.
type copyCount struct {
	played int
	last   noteID     // its last played reading
	legs   []legCount // readings per leg, a few
}

// legCount is how many times a leg read a frame.
type legCount struct {
	leg uint64
	n   int
}

// newCopies returns the filter for a recording of several legs (Clients),
// or nil for one of a single leg, whose frames are all first arrivals
// (nil's first says so without hashing).
func newCopies(legs int) *copies {
	if legs < 2 {
		return nil
	}
	return &copies{topics: make(map[string]*topicCopies)}
}

// first reports whether the notification received at at with routing
// key, on topic where the key is an id of the connection's (else ""),
// read by leg, is a first arrival, and returns the note played for it
// (itself, when it is). The id is left out of the frame's identity.
func (c *copies) first(at int64, key, topic string, leg uint64, frame []byte) (noteID, bool) {
	if c == nil {
		return noteID{at, key}, true
	}
	name, id := key, ""
	if topic != "" {
		name, id = topic, key
	}
	tc := c.topics[name]
	if tc == nil {
		tc = &topicCopies{seen: make(map[xxh3.Uint128]*copyCount)}
		c.topics[name] = tc
	}
	h := identity(frame, id)
	cc := tc.seen[h]
	if cc == nil {
		cc = &copyCount{}
		tc.seen[h] = cc
		if len(tc.order) < copyWindow {
			tc.order = append(tc.order, h)
		} else {
			delete(tc.seen, tc.order[tc.next])
			tc.order[tc.next] = h
			tc.next = (tc.next + 1) % copyWindow
		}
	}
	i := slices.IndexFunc(cc.legs, func(l legCount) bool { return l.leg == leg })
	if i < 0 {
		i = len(cc.legs)
		cc.legs = append(cc.legs, legCount{leg: leg})
	}
	cc.legs[i].n++
	if cc.legs[i].n > cc.played {
		cc.played, cc.last = cc.played+1, noteID{at, key}
		return cc.last, true
	}
	return cc.last, false
}

// identity hashes frame without the quoted key in it, when there is one.
func identity(frame []byte, key string) xxh3.Uint128 {
	if key == "" {
		return xxh3.Hash128(frame)
	}
	q := make([]byte, 0, len(key)+2)
	q = append(append(append(q, '"'), key...), '"')
	i := bytes.Index(frame, q)
	if i < 0 {
		return xxh3.Hash128(frame)
	}
	h := xxh3.New()
	_, _ = h.Write(frame[:i])
	_, _ = h.Write(frame[i+len(q):])
	return h.Sum128()
}
