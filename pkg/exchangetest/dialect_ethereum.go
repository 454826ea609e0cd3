package exchangetest

import (
	"encoding/json"
	"time"

	"github.com/wsfan/wsfan/pkg/ethereum"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// ethereumExchange is an Ethereum node: eth_subscribe returns a fresh id
// per subscription and connection, and a request over the limit gets
// -32005.
type ethereumExchange struct{}

func (ethereumExchange) builtin(c *conn, req *protocol.Incoming) (any, *RPCError, bool) {
	wire := c.s.wire
	switch req.Op {
	case protocol.OpSubscribe:
		topic := req.Topics[0]
		if !c.s.accepts(topic) {
			return nil, &RPCError{Code: protocol.CodeInvalidParams, Message: "subscription " + topic + " refused"}, true
		}
		id := wire.SubscriptionID()
		c.after = append(c.after, func() { c.s.addSub(c, topic, id) })
		return json.RawMessage(wire.AppendSubscribed(nil, []string{id})), nil, true
	case protocol.OpUnsubscribe:
		var removed []string
		if c.s.removeEthSub(c, req.Topics[0]) {
			removed = req.Topics
		}
		return json.RawMessage(wire.AppendUnsubscribed(nil, removed)), nil, true
	}
	return nil, nil, false
}

func (ethereumExchange) appendResult(dst, id, result []byte, _ time.Time) []byte {
	return ethereum.Server().AppendResult(dst, id, result)
}

func (ethereumExchange) throttled() *RPCError {
	return &RPCError{Code: -32005, Message: "limit exceeded"}
}
