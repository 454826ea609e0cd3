package deribit

import "github.com/wsfan/wsfan/internal/jsonscan"

// AppendIdentity appends what identifies a notification, from the fields
// Deribit documents for each channel: a book change's change_id; each
// trade's trade_id (a trades notification is an array of trades); else
// the timestamp (a ticker, a quote). Two notifications with one
// timestamp stay two: the merge counts how often each connection sent
// one (standby.Dial).
func (rules) AppendIdentity(dst, data []byte) ([]byte, bool) {
	i := jsonscan.SkipSpace(data, 0)
	if i < len(data) && data[i] == '[' {
		return appendTradeIDs(dst, data, i)
	}
	var v [2][]byte
	jsonscan.Values(data, i, identityKeys, v[:])
	switch {
	case v[0] != nil:
		return append(append(dst, 'c'), v[0]...), true
	case v[1] != nil:
		return append(append(dst, 't'), v[1]...), true
	}
	return dst, false
}

// identityKeys are the members AppendIdentity reads, in order of
// preference.
var identityKeys = []string{"change_id", "timestamp"}

// tradeKeys is the member naming a trade.
var tradeKeys = []string{"trade_id"}

// appendTradeIDs appends the trade_id of every trade of the array at
// data[i], or reports false when one has none.
func appendTradeIDs(dst, data []byte, i int) ([]byte, bool) {
	dst = append(dst, 'x')
	i = jsonscan.SkipSpace(data, i+1)
	for i < len(data) && data[i] != ']' {
		var id [1][]byte
		jsonscan.Values(data, i, tradeKeys, id[:])
		end, err := jsonscan.SkipValue(data, i)
		if err != nil || id[0] == nil {
			return dst, false
		}
		dst = append(append(dst, id[0]...), ',')
		i = jsonscan.SkipSpace(data, end)
		if i < len(data) && data[i] == ',' {
			i = jsonscan.SkipSpace(data, i+1)
		}
	}
	return dst, true
}
