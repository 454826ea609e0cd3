package main

import (
	"bytes"

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
	last   int            // index in the notes of its last played reading
	legs   map[uint64]int // readings per leg
}

// first reports whether the note at index i, read by leg, is a first
// arrival, and else the index of the last note played for it. The frame's
// bytes that the connection was given (key, an Ethereum subscription id)
// are left out of its identity.
func (c *copies) first(i int, topic string, leg uint64, key string, frame []byte) (bool, int) {
	tc := c.topics[topic]
	if tc == nil {
		tc = &topicCopies{seen: make(map[xxh3.Uint128]*copyCount)}
		c.topics[topic] = tc
	}
	h := identity(frame, key)
	cc := tc.seen[h]
	if cc == nil {
		cc = &copyCount{legs: make(map[uint64]int, 2)}
		tc.seen[h] = cc
		if len(tc.order) < copyWindow {
			tc.order = append(tc.order, h)
		} else {
			delete(tc.seen, tc.order[tc.next])
			tc.order[tc.next] = h
			tc.next = (tc.next + 1) % copyWindow
		}
	}
	cc.legs[leg]++
	if cc.legs[leg] > cc.played {
		cc.played, cc.last = cc.played+1, i
		return true, i
	}
	return false, cc.last
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
