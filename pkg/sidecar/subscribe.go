package sidecar

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// subscribe takes a reference on every topic of names the client does
// not hold yet (opening new ones upstream concurrently) and waits for
// them. It returns the accepted names in request order, the topics to
// attach with replyAttach, and the first refusal. A client going over
// Config.MaxTopicsPerClient is disconnected.
func (c *wsConn) subscribe(names []string) (accepted []string, attach []*topic, err error) {
	hub := c.srv.hub
	seen := make(map[string]bool, len(names))
	var fresh []*topic
	for _, n := range names {
		if seen[n] {
			continue
		}
		seen[n] = true
		if _, ok := c.topics[n]; ok {
			continue
		}
		if len(c.topics)+len(fresh) >= c.srv.cfg.MaxTopicsPerClient {
			for _, t := range fresh {
				hub.release(t)
			}
			c.close(reasonTooManyTopics(c.srv.cfg.MaxTopicsPerClient), true)
			return nil, nil, errors.New("too many topics")
		}
		if _, perr := c.srv.proto.NewTopic(n); perr != nil {
			err = errors.Join(err, perr)
			continue
		}
		t, rerr := hub.reserve(n)
		if rerr != nil {
			err = errors.Join(err, rerr)
			continue
		}
		fresh = append(fresh, t)
	}
	// The reader waits here, so it cannot end meanwhile: only the
	// Server's context and the timeout bound the wait.
	ctx, cancel := context.WithTimeout(c.srv.ctx, c.srv.cfg.RequestTimeout)
	defer cancel()
	ok := make(map[string]*topic, len(fresh))
	for _, t := range fresh {
		if werr := hub.wait(ctx, t); werr != nil {
			if err == nil {
				err = werr
			}
			continue
		}
		ok[t.name] = t
	}
	for _, n := range names {
		if seen[n] && (c.topics[n] != nil || ok[n] != nil) {
			accepted = append(accepted, n)
			seen[n] = false
		}
	}
	for _, t := range ok {
		attach = append(attach, t)
	}
	return accepted, attach, err
}

// replyAttach queues frame (an acknowledgement, or nil) and attaches
// topics as one step for the topics' pumps: their locks are held
// throughout, so no notification of them precedes the acknowledgement,
// and none published after the client read it is missed.
func (c *wsConn) replyAttach(frame []byte, topics []*topic) {
	slices.SortFunc(topics, func(a, b *topic) int { return strings.Compare(a.name, b.name) })
	for i, t := range topics { // lock in name order: pumps hold one lock at a time
		if i == 0 || topics[i-1] != t {
			t.mu.Lock()
		}
	}
	if frame != nil {
		c.reply(frame)
	}
	for i, t := range topics {
		if _, dup := c.topics[t.name]; dup || (i > 0 && topics[i-1] == t) { // asked twice in one batch
			c.srv.hub.release(t)
			continue
		}
		c.topics[t.name] = t
		t.attachLocked(c.session)
	}
	for i, t := range topics {
		if i == 0 || topics[i-1] != t {
			t.mu.Unlock()
		}
	}
	c.ntopics.Store(int32(len(c.topics)))
}

// unsubscribe leaves the named topics and returns those the client held.
func (c *wsConn) unsubscribe(names []string) []string {
	removed := make([]string, 0, len(names))
	for _, n := range names {
		t, ok := c.topics[n]
		if !ok {
			continue
		}
		delete(c.topics, n)
		t.detach(c.session)
		c.srv.hub.release(t)
		removed = append(removed, n)
	}
	c.ntopics.Store(int32(len(c.topics)))
	return removed
}

type channelParams struct {
	Channels []string `json:"channels"`
}

// subscribeChannels answers a Thalex or Deribit subscribe with the list of
// accepted channels, as the exchanges do.
func (c *wsConn) subscribeChannels(id, params json.RawMessage) ([]byte, []*topic, func() []byte) {
	d := c.srv.dialect
	var p channelParams
	if json.Unmarshal(params, &p) != nil || len(p.Channels) == 0 {
		return d.appendError(nil, id, codeInvalidParams, "invalid params: want {\"channels\":[...]}", nil), nil, nil
	}
	accepted, attach, _ := c.subscribe(p.Channels)
	res, _ := json.Marshal(accepted)
	return d.appendResult(nil, id, res), attach, nil
}

// unsubscribeChannels answers a Thalex or Deribit unsubscribe with the
// channels that were subscribed.
func (c *wsConn) unsubscribeChannels(id, params json.RawMessage) []byte {
	d := c.srv.dialect
	var p channelParams
	if json.Unmarshal(params, &p) != nil {
		return d.appendError(nil, id, codeInvalidParams, "invalid params: want {\"channels\":[...]}", nil)
	}
	res, _ := json.Marshal(c.unsubscribe(p.Channels))
	return d.appendResult(nil, id, res)
}

// ethSubscribe answers eth_subscribe with the topic's local subscription
// id: the same for every local client, stable across upstream reconnects.
func (c *wsConn) ethSubscribe(id, params json.RawMessage) ([]byte, []*topic, func() []byte) {
	d := c.srv.dialect
	name, ok := protocol.EthereumTopic(params)
	if !ok {
		return d.appendError(nil, id, codeInvalidParams, "invalid params: want [\"newHeads\"] or [\"logs\",{...}]", nil), nil, nil
	}
	accepted, attach, err := c.subscribe([]string{name})
	if len(accepted) == 0 {
		if err == nil {
			err = errors.New("subscription refused")
		}
		return errorResponse(d, id, err), nil, nil
	}
	t := c.topics[name]
	if len(attach) > 0 {
		t = attach[0]
	}
	return d.appendResult(nil, id, appendJSONString(nil, t.localID)), attach, nil
}

// ethUnsubscribe answers eth_unsubscribe: true if the id was subscribed.
func (c *wsConn) ethUnsubscribe(id, params json.RawMessage) []byte {
	d := c.srv.dialect
	var ids []string
	if json.Unmarshal(params, &ids) != nil || len(ids) != 1 {
		return d.appendError(nil, id, codeInvalidParams, "invalid params: want [\"0x...\"]", nil)
	}
	for n, t := range c.topics {
		if t.localID == ids[0] {
			c.unsubscribe([]string{n})
			return d.appendResult(nil, id, []byte("true"))
		}
	}
	return d.appendResult(nil, id, []byte("false"))
}

// errorResponse turns an upstream failure into the dialect's error
// object, keeping the server's code, message and data when it sent one.
func errorResponse(d dialect, id []byte, err error) []byte {
	var re *client.RPCError
	if errors.As(err, &re) {
		return d.appendError(nil, id, re.Code, re.Message, re.Data)
	}
	return d.appendError(nil, id, codeUpstream, err.Error(), nil)
}

// heartbeatMethod answers Deribit's heartbeat methods locally: the
// upstream heartbeat belongs to the sidecar's own connection.
func (c *wsConn) heartbeatMethod(req *request) ([]byte, bool) {
	d := c.srv.dialect
	switch req.Method {
	case "public/set_heartbeat":
		var p struct {
			Interval float64 `json:"interval"`
		}
		if json.Unmarshal(req.Params, &p) != nil || p.Interval <= 0 {
			return d.appendError(nil, req.ID, codeInvalidParams, "invalid params: want {\"interval\":N}", nil), true
		}
		c.startHeartbeat(time.Duration(p.Interval * float64(time.Second)))
		return d.appendResult(nil, req.ID, []byte(`"ok"`)), true
	case "public/disable_heartbeat":
		c.stopHeartbeat()
		return d.appendResult(nil, req.ID, []byte(`"ok"`)), true
	case "public/test":
		return d.appendResult(nil, req.ID, []byte(`{"version":"wsfan-sidecar"}`)), true
	}
	return nil, false
}

var testRequest = []byte(`{"jsonrpc":"2.0","method":"heartbeat","params":{"type":"test_request"}}`)

// startHeartbeat sends Deribit test requests every d, like the exchange.
func (c *wsConn) startHeartbeat(d time.Duration) {
	c.hbMu.Lock()
	defer c.hbMu.Unlock()
	if c.hb != nil {
		c.hb.Stop()
	}
	var tick func()
	tick = func() {
		c.hbMu.Lock()
		defer c.hbMu.Unlock()
		if c.hb == nil {
			return
		}
		c.reply(textFrame(testRequest))
		c.hb = time.AfterFunc(d, tick)
	}
	c.hb = time.AfterFunc(d, tick)
}

func (c *wsConn) stopHeartbeat() {
	c.hbMu.Lock()
	defer c.hbMu.Unlock()
	if c.hb != nil {
		c.hb.Stop()
		c.hb = nil
	}
}
