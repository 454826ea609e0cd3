package deribit

import (
	"github.com/wsfan/wsfan/internal/jsonscan"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// AppendIdentity appends what identifies a notification, from the fields
// Deribit documents for each channel: a book change's change_id; each
// trade's trade_id (a trades notification is an array of trades); else
// the timestamp (a ticker, a quote). Two notifications with one
// timestamp stay two: the merge counts how often each connection sent
// one (client.DialStandby).
func (*dialect) AppendIdentity(dst, data []byte) ([]byte, bool) {
	i := jsonscan.SkipSpace(data, 0)
	if i < len(data) && data[i] == '[' {
		return appendTradeIDs(dst, data, i)
	}
	var timestamp []byte
	m := jsonscan.Object(data, 0)
	for {
		key, start, more := m.Next()
		if !more {
			break
		}
		end := m.Skip()
		switch string(key) {
		case "change_id":
			return append(append(dst, 'c'), data[start:end]...), true
		case "timestamp":
			timestamp = data[start:end]
		}
	}
	if timestamp == nil {
		return dst, false
	}
	return append(append(dst, 't'), timestamp...), true
}

// appendTradeIDs appends the trade_id of every trade of the array at
// data[i], or reports false when one has none.
func appendTradeIDs(dst, data []byte, i int) ([]byte, bool) {
	dst = append(dst, 'x')
	i = jsonscan.SkipSpace(data, i+1)
	for i < len(data) && data[i] != ']' {
		var id []byte
		m := jsonscan.Object(data, i)
		for {
			key, start, more := m.Next()
			if !more {
				break
			}
			end := m.Skip()
			if string(key) == "trade_id" {
				id = data[start:end]
			}
		}
		end, err := jsonscan.SkipValue(data, i)
		if err != nil || id == nil {
			return dst, false
		}
		dst = append(append(dst, id...), ',')
		i = jsonscan.SkipSpace(data, end)
		if i < len(data) && data[i] == ',' {
			i = jsonscan.SkipSpace(data, i+1)
		}
	}
	return dst, true
}

var _ protocol.Identifying = (*dialect)(nil)
