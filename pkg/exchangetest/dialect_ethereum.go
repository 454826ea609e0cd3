package exchangetest

import (
	"encoding/hex"
	"math/rand/v2"
	"time"

	"github.com/wsfan/wsfan/pkg/protocol"
)

// ethereumDialect speaks an Ethereum node's JSON-RPC: eth_subscribe returns
// a fresh random id per subscription and connection, notifications are
// {"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":ID,"result":DATA}},
// batch arrays are supported.
type ethereumDialect struct{}

func (d ethereumDialect) handleText(c *conn, msg []byte) { serveRPC(c, d, msg) }

func (ethereumDialect) perConn() bool { return true }

func (ethereumDialect) batch() bool { return true }

func (ethereumDialect) appendNotification(dst []byte, _, subID string, data []byte) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"`...)
	dst = append(dst, subID...)
	dst = append(dst, `","result":`...)
	dst = append(dst, data...)
	return append(dst, "}}"...)
}

func (ethereumDialect) appendResult(dst []byte, id, result []byte, _ time.Time) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = append(dst, id...)
	dst = append(dst, `,"result":`...)
	dst = append(dst, result...)
	return append(dst, '}')
}

func (ethereumDialect) appendError(dst []byte, id []byte, e *RPCError) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = append(dst, id...)
	dst = append(dst, `,"error":`...)
	dst = appendErrorObject(dst, e)
	return append(dst, '}')
}

func (ethereumDialect) builtin(c *conn, req *request) (any, *RPCError, bool) {
	switch req.Method {
	case "eth_subscribe":
		topic, ok := protocol.EthereumTopic(req.Params)
		if !ok {
			return nil, errInvalidParams, true
		}
		if !c.s.accepts(topic) {
			return nil, &RPCError{Code: -32602, Message: "subscription " + topic + " refused"}, true
		}
		id := newEthSubID()
		c.after = append(c.after, func() { c.s.addSub(c, topic, id) })
		return id, nil, true
	case "eth_unsubscribe":
		var ids []string
		if !decodeParams(req, &ids) || len(ids) != 1 {
			return nil, errInvalidParams, true
		}
		return c.s.removeEthSub(c, ids[0]), nil, true
	}
	return nil, nil, false
}

// newEthSubID returns a random subscription id, "0x" and 32 hex digits.
func newEthSubID() string {
	var b [16]byte
	for i := 0; i < 16; i += 8 {
		u := rand.Uint64()
		for j := range 8 {
			b[i+j] = byte(u >> (8 * j))
		}
	}
	return "0x" + hex.EncodeToString(b[:])
}
