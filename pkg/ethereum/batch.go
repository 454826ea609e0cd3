package ethereum

import "github.com/wsfan/wsfan/pkg/protocol"

// AppendBatch implements protocol.BatchCalling: the calls as one JSON-RPC
// batch array, which a node answers with one array of the responses
// (go-ethereum rpc/handler.go, handleBatch). Over the node's cap
// (--rpc.batch-request-limit) it answers one -32600 "batch too large"
// instead; over its response budget (--rpc.batch-response-max-size) it
// answers the calls past it with -32003 "response too large".
func (d dialect) AppendBatch(dst []byte, ids []uint64, calls []protocol.Call) ([]byte, error) {
	dst = append(dst, '[')
	for i, call := range calls {
		if i > 0 {
			dst = append(dst, ',')
		}
		var err error
		if dst, err = d.AppendRequest(dst, ids[i], call.Method, call.Params); err != nil {
			return nil, err
		}
	}
	return append(dst, ']'), nil
}

// MaxBatch implements protocol.BatchCalling: MaxBatch calls a batch.
func (dialect) MaxBatch() int { return MaxBatch }

// codeResponseTooLarge is a node's answer to the calls of a batch past
// its response budget: go-ethereum's -32003 "response too large"
// (rpc/errors.go).
const codeResponseTooLarge = -32003

// ResponseTooLarge implements protocol.ResponseLimited.
func (dialect) ResponseTooLarge(code int) bool { return code == codeResponseTooLarge }
