package okx

import (
	"github.com/wsfan/wsfan/internal/jsonscan"
)

// AppendIdentity appends what identifies a push's data for a hot
// standby's merge (standby.Dial): a trade's tradeId ("the last
// trade ID in the trades aggregation"), every item's; a book's prevSeqId
// and seqId, which OKX documents as the same on every connection ("The
// set of sequence ID received by users is the same if users are
// connecting to the same channel through multiple websocket
// connections"), the pair telling a quiet book's empty update (seqId
// equal to prevSeqId) from the change before it. A push without them (a
// ticker) is told apart by its content.
func (rules) AppendIdentity(dst, data []byte) ([]byte, bool) {
	start := len(dst)
	ok := true
	_ = jsonscan.Elements(data, 0, func(item []byte) bool {
		var trade, seq, prev []byte
		m := jsonscan.Object(item, 0)
		for k, vs, more := m.Next(); more; k, vs, more = m.Next() {
			end := m.Skip()
			switch string(k) {
			case "tradeId":
				trade = item[vs:end]
			case "seqId":
				seq = item[vs:end]
			case "prevSeqId":
				prev = item[vs:end]
			}
		}
		switch {
		case trade != nil:
			dst = append(append(dst, 't'), trade...)
			return true // each trade of the push
		case seq != nil:
			dst = append(append(append(append(dst, 's'), prev...), ','), seq...)
		default:
			ok = false
		}
		return false
	})
	if !ok || len(dst) == start {
		return dst[:start], false
	}
	return dst, true
}
