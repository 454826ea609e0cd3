package sidecar

import (
	"strconv"
	"strings"
)

// A go-ethereum client keys its subscriptions by id, and geth gives two
// identical eth_subscribe calls on one connection two ids. A topic has
// one local id, shared by every local client (stable across upstream
// reconnects), so a connection subscribing a topic it holds already gets
// a twin of it: a topic of its own, with an id of its own, over the same
// upstream subscription (the SDK subscribes the name upstream once and
// feeds both). Unsubscribing one id leaves the other. Twins are keyed
// name + twinMark + n (n from 2); hub.validate refuses a name a client
// sends with the mark in it, so only the sidecar makes twin keys.

// twinMark separates a twin's number from its topic's name in its key.
const twinMark = "\x00twin"

// twinKey is the key of the twin the session would hold for name: the
// name itself while the session does not hold it, else its first twin
// the session does not hold (nor has pending). Called by the session's
// subscription goroutine.
func (s *session) twinKey(name string) string {
	if !s.holds(name) {
		return name
	}
	for n := 2; ; n++ {
		key := name + twinMark + strconv.Itoa(n)
		if !s.holds(key) {
			return key
		}
	}
}

// upstreamName is the topic a key names upstream: the key itself, or the
// name a twin's key starts with.
func upstreamName(key string) string {
	name, _, _ := strings.Cut(key, twinMark)
	return name
}
