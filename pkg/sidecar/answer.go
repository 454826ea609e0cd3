package sidecar

import (
	"encoding/json"
	"errors"

	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// The answers the sidecar makes itself to a WebSocket client's subscribe
// and unsubscribe requests, in the dialect's shape, through the session's
// subscribe and unsubscribe.

// channelParams are the params of a Thalex or Deribit (un)subscribe.
type channelParams struct {
	Channels []string `json:"channels"`
}

// subscribeChannels answers a Thalex or Deribit subscribe with the list of
// accepted channels, as the exchanges do.
func (c *wsConn) subscribeChannels(id, params json.RawMessage) ([]byte, []*topic, func() []byte) {
	d := c.cfg.dialect
	var p channelParams
	if json.Unmarshal(params, &p) != nil || len(p.Channels) == 0 {
		return d.appendError(nil, id, codeInvalidParams, "invalid params: want {\"channels\":[...]}", nil), nil, nil
	}
	accepted, attach, _ := c.s.subscribe(c.cfg.ctx, p.Channels)
	res, _ := json.Marshal(accepted)
	return d.appendResult(nil, id, res), attach, nil
}

// unsubscribeChannels answers a Thalex or Deribit unsubscribe with the
// channels that were subscribed.
func (c *wsConn) unsubscribeChannels(id, params json.RawMessage) []byte {
	d := c.cfg.dialect
	var p channelParams
	if json.Unmarshal(params, &p) != nil {
		return d.appendError(nil, id, codeInvalidParams, "invalid params: want {\"channels\":[...]}", nil)
	}
	res, _ := json.Marshal(c.s.unsubscribe(p.Channels))
	return d.appendResult(nil, id, res)
}

// ethSubscribe answers eth_subscribe with the topic's local subscription
// id: the same for every local client, stable across upstream reconnects.
func (c *wsConn) ethSubscribe(id, params json.RawMessage) ([]byte, []*topic, func() []byte) {
	d := c.cfg.dialect
	name, ok := protocol.EthereumTopic(params)
	if !ok {
		return d.appendError(nil, id, codeInvalidParams, "invalid params: want [\"newHeads\"] or [\"logs\",{...}]", nil), nil, nil
	}
	accepted, attach, err := c.s.subscribe(c.cfg.ctx, []string{name})
	if len(accepted) == 0 {
		if err == nil {
			err = errors.New("subscription refused")
		}
		return errorResponse(d, id, err), nil, nil
	}
	t := c.s.topics[name]
	if len(attach) > 0 {
		t = attach[0]
	}
	return d.appendResult(nil, id, appendJSONString(nil, t.localID)), attach, nil
}

// ethUnsubscribe answers eth_unsubscribe: true if the id was subscribed.
func (c *wsConn) ethUnsubscribe(id, params json.RawMessage) []byte {
	d := c.cfg.dialect
	var ids []string
	if json.Unmarshal(params, &ids) != nil || len(ids) != 1 {
		return d.appendError(nil, id, codeInvalidParams, "invalid params: want [\"0x...\"]", nil)
	}
	for n, t := range c.s.topics {
		if t.localID == ids[0] {
			c.s.unsubscribe([]string{n})
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
