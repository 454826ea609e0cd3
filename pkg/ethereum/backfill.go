package ethereum

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/wsfan/wsfan/internal/jsonscan"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// A node's subscriptions do not replay: the heads and logs a node made
// while the client was reconnecting never come on the new subscription.
// The client fetches them (protocol.Recoverer), as the clients people
// pick for this do (alchemy-web3 and web3.js's reconnecting provider):
// eth_blockNumber for the current block, then eth_getBlockByNumber(n,
// false) for each missed head, delivered in newHeads' own shape, and
// eth_getLogs over the missed blocks with the subscription's own filter,
// so a program (an unchanged ethclient behind the sidecar) sees ordinary
// heads and logs.
//
// A head's position is its number; a log's is its block number and
// index, blockNumber<<logIndexBits | logIndex.

// logIndexBits is how many bits of a log's position its index takes: a
// block holds fewer than a million logs.
const logIndexBits = 20

// Position reads a head's number, or a log's block and index.
func (dialect) Position(t *protocol.Topic, data []byte) (uint64, bool) {
	if !t.Retracts { // a head: its number, found as Link finds it, without a scan
		if n, ok := quantity(valueOf(data, keyNumber)); ok {
			return n, true
		}
	}
	block, index, ok := positionFields(data, t.Retracts)
	if !ok {
		return 0, false
	}
	if t.Retracts {
		return block<<logIndexBits | index, true
	}
	return block, true
}

// positionFields reads "number" (a head) or "blockNumber" and
// "logIndex" (a log).
func positionFields(data []byte, log bool) (block, index uint64, ok bool) {
	var haveBlock, haveIndex bool
	m := jsonscan.Object(data, 0)
	for {
		key, start, more := m.Next()
		if !more {
			break
		}
		end := m.Skip()
		switch k := string(key); {
		case !log && k == "number", log && k == "blockNumber":
			block, haveBlock = quantity(data[start:end])
		case log && k == "logIndex":
			index, haveIndex = quantity(data[start:end])
			haveIndex = haveIndex && index < 1<<logIndexBits
		}
		if haveBlock && (!log || haveIndex) {
			break // the rest is not read
		}
	}
	return block, index, haveBlock && (!log || haveIndex)
}

// Current is eth_blockNumber.
func (dialect) Current() protocol.Call { return protocol.Call{Method: "eth_blockNumber"} }

// ParseCurrent reads eth_blockNumber's result as the topic's last
// position by then: the current head, or the current block's last log.
func (dialect) ParseCurrent(t *protocol.Topic, result []byte) (uint64, error) {
	n, err := parseQuantity(result)
	if err != nil || !t.Retracts {
		return n, err
	}
	return (n+1)<<logIndexBits - 1, nil
}

// Distance is how many blocks apart two positions are.
func (dialect) Distance(t *protocol.Topic, after, through uint64) uint64 {
	if t.Retracts {
		after, through = after>>logIndexBits, through>>logIndexBits
	}
	if through < after {
		return 0
	}
	return through - after
}

// Fetch is eth_getBlockByNumber for each head after after through
// through; for logs, one eth_getLogs of the subscription's filter over
// the blocks from after's through through's.
func (dialect) Fetch(t *protocol.Topic, after, through uint64) []protocol.Call {
	if !t.Retracts {
		calls := make([]protocol.Call, 0, through-after)
		for n := after + 1; n <= through; n++ {
			calls = append(calls, protocol.Call{Method: "eth_getBlockByNumber", Params: fmt.Appendf(nil, `["0x%x",false]`, n)})
		}
		return calls
	}
	filter := logsFilter(t)
	filter["fromBlock"] = fmt.Sprintf("0x%x", after>>logIndexBits)
	filter["toBlock"] = fmt.Sprintf("0x%x", through>>logIndexBits)
	params, _ := json.Marshal([]any{filter})
	return []protocol.Call{{Method: "eth_getLogs", Params: params}}
}

// logsFilter is a logs topic's filter object (["logs", {...}]), a copy.
func logsFilter(t *protocol.Topic) map[string]any {
	var params []json.RawMessage
	filter := map[string]any{}
	if json.Unmarshal(t.Sub, &params) == nil && len(params) > 1 {
		_ = json.Unmarshal(params[1], &filter)
	}
	return filter
}

// blockOnly are the fields eth_getBlockByNumber's block has beside the
// header's (go-ethereum internal/ethapi RPCMarshalBlock): newHeads sends
// the header alone (eth/filters/api.go NewHeads).
var blockOnly = []string{"transactions", "uncles", "size", "totalDifficulty", "withdrawals"}

// Messages turns blocks into newHeads payloads (their header fields; a
// null, no such block yet, is none), or eth_getLogs' arrays into the
// logs after position after through through, in block and log order.
func (d dialect) Messages(t *protocol.Topic, after, through uint64, results [][]byte) ([][]byte, error) {
	var out [][]byte
	for _, r := range results {
		if !t.Retracts {
			if strings.TrimSpace(string(r)) == "null" {
				continue
			}
			var fields map[string]json.RawMessage
			if err := json.Unmarshal(r, &fields); err != nil {
				return nil, fmt.Errorf("ethereum block: %w", err)
			}
			for _, f := range blockOnly {
				delete(fields, f)
			}
			data, err := json.Marshal(fields)
			if err != nil {
				return nil, err
			}
			out = append(out, data)
			continue
		}
		var logs []json.RawMessage
		if err := json.Unmarshal(r, &logs); err != nil {
			return nil, fmt.Errorf("ethereum logs: %w", err)
		}
		for _, l := range logs {
			if pos, ok := d.Position(t, l); ok && pos > after && pos <= through {
				out = append(out, l)
			}
		}
	}
	return out, nil
}

// tooMuch reports the providers' refusals of an eth_getLogs over too
// many results or too large a response: Infura's -32005 "query returned
// more than 10000 results", Alchemy's "Log response size exceeded", and
// any other answer saying the query or response is too large.
func tooMuch(code int, message string) bool {
	m := strings.ToLower(message)
	return code == -32005 && strings.Contains(m, "more than") ||
		strings.Contains(m, "log response size exceeded") ||
		strings.Contains(m, "too large") || strings.Contains(m, "too many")
}

// parseQuantity reads a JSON hex quantity, "0x1b4" (quantity, with an
// error naming what it got).
func parseQuantity(raw []byte) (uint64, error) {
	n, ok := quantity(bytes.TrimSpace(raw))
	if !ok {
		return 0, fmt.Errorf("quantity %.24s: want a JSON string of 0x and at most 16 hex digits", raw)
	}
	return n, nil
}

// quantity reads a JSON hex quantity, "0x1b4", without allocating.
func quantity(v []byte) (uint64, bool) {
	if len(v) < 5 || v[0] != '"' || v[len(v)-1] != '"' || v[1] != '0' || v[2] != 'x' || len(v) > 2+2+16 {
		return 0, false
	}
	var n uint64
	for _, c := range v[3 : len(v)-1] {
		switch {
		case c >= '0' && c <= '9':
			n = n<<4 | uint64(c-'0')
		case c >= 'a' && c <= 'f':
			n = n<<4 | uint64(c-'a'+10)
		case c >= 'A' && c <= 'F':
			n = n<<4 | uint64(c-'A'+10)
		default:
			return 0, false
		}
	}
	return n, true
}
