package ethereum

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/wsfan/wsfan/internal/jsonscan"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// A node's subscriptions do not replay: the heads a node made while the
// client was reconnecting never come on the new subscription. The client
// fetches them (protocol.Backfilling), as the clients people pick for
// this do (alchemy-web3 and web3.js's reconnecting provider backfill
// with eth_getBlockByNumber): eth_blockNumber for the current head, then
// eth_getBlockByNumber(n, false) for each missed one, delivered in
// newHeads' own shape, so a program (an unchanged ethclient behind the
// sidecar) sees ordinary heads.

// Position reads a newHeads payload's number.
func (dialect) Position(data []byte) (uint64, bool) {
	m := jsonscan.Object(data, 0)
	for {
		key, start, more := m.Next()
		if !more {
			return 0, false
		}
		end := m.Skip()
		if string(key) == "number" {
			n, err := parseQuantity(data[start:end])
			return n, err == nil
		}
	}
}

// Current is eth_blockNumber.
func (dialect) Current() protocol.Call { return protocol.Call{Method: "eth_blockNumber"} }

// ParseCurrent reads eth_blockNumber's result.
func (dialect) ParseCurrent(result []byte) (uint64, error) { return parseQuantity(result) }

// Fetch is eth_getBlockByNumber of pos, without its transactions.
func (dialect) Fetch(pos uint64) protocol.Call {
	return protocol.Call{Method: "eth_getBlockByNumber", Params: fmt.Appendf(nil, `["0x%x",false]`, pos)}
}

// blockOnly are the fields eth_getBlockByNumber's block has beside the
// header's (go-ethereum internal/ethapi RPCMarshalBlock): newHeads sends
// the header alone (eth/filters/api.go NewHeads).
var blockOnly = []string{"transactions", "uncles", "size", "totalDifficulty", "withdrawals"}

// Message turns a block into a newHeads payload: its header fields. A
// null result (no such block yet) is none.
func (dialect) Message(result []byte) ([]byte, bool, error) {
	if strings.TrimSpace(string(result)) == "null" {
		return nil, false, nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(result, &fields); err != nil {
		return nil, false, fmt.Errorf("ethereum block: %w", err)
	}
	for _, f := range blockOnly {
		delete(fields, f)
	}
	data, err := json.Marshal(fields)
	return data, err == nil, err
}

// parseQuantity reads a JSON hex quantity, "0x1b4".
func parseQuantity(raw []byte) (uint64, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return 0, fmt.Errorf("quantity %.20s: %w", raw, err)
	}
	digits, ok := strings.CutPrefix(s, "0x")
	if !ok || digits == "" {
		return 0, fmt.Errorf("quantity %q: want 0x and hex digits", s)
	}
	return strconv.ParseUint(digits, 16, 64)
}
