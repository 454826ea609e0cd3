package protocol

import (
	"strconv"

	"github.com/wsfan/wsfan/internal/jsonscan"
)

// appendRPC appends a JSON-RPC 2.0 request. emptyParams stands in for nil
// params ("{}" for the exchanges, "[]" for Ethereum).
func appendRPC(dst []byte, id uint64, method string, params []byte, emptyParams string) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = strconv.AppendUint(dst, id, 10)
	dst = append(dst, `,"method":`...)
	dst = AppendJSONString(dst, method)
	dst = append(dst, `,"params":`...)
	if len(params) == 0 {
		dst = append(dst, emptyParams...)
	} else {
		dst = append(dst, params...)
	}
	return append(dst, '}')
}

// rpcLayout says where a JSON-RPC dialect puts a notification's routing
// key and payload inside "params": Deribit {"channel","data"} (and a
// heartbeat's "type"), Ethereum {"subscription","result"}.
type rpcLayout struct {
	key      string
	payloads [2]string // member names holding the payload; "" for unused
}

func (l *rpcLayout) isPayload(name []byte) bool {
	return string(name) == l.payloads[0] || (l.payloads[1] != "" && string(name) == l.payloads[1])
}

// scanRPC fills f from a JSON-RPC frame: a response's id, result and
// error, or a notification's key and payload found through layout. It
// returns the frame's "method" (nil for a response); the dialect decides
// the kind from it.
func scanRPC(frame []byte, f *Frame, layout *rpcLayout) (method []byte, err error) {
	m := jsonscan.Object(frame, 0)
	for {
		key, start, ok := m.Next()
		if !ok {
			break
		}
		switch string(key) {
		case "method":
			end := m.Skip()
			method, _ = jsonscan.Unquote(frame[start:end])
		case "params":
			end, done, err := scanParams(frame, start, f, layout)
			if err != nil {
				return nil, err
			}
			if done {
				return method, nil
			}
			m.SkipTo(end)
		default:
			handled, err := classifyResponseMember(&m, frame, key, start, f)
			if err != nil {
				return nil, ErrMalformed
			}
			if !handled {
				m.Skip()
			}
		}
	}
	if m.Err() != nil {
		return nil, ErrMalformed
	}
	if method == nil && f.Kind != KindResponse {
		return nil, ErrUnrecognized
	}
	return method, nil
}

// scanParams scans a notification's params object for its routing key
// and payload. done is true when the payload was sliced from the frame's
// tail, so nothing is left to scan.
func scanParams(frame []byte, start int, f *Frame, layout *rpcLayout) (end int, done bool, err error) {
	p := jsonscan.Object(frame, start)
	for {
		key, vstart, ok := p.Next()
		if !ok {
			break
		}
		switch {
		case string(key) == layout.key:
			e := p.Skip()
			s, ok := jsonscan.Unquote(frame[vstart:e])
			if !ok {
				return 0, false, ErrUnrecognized
			}
			f.Key = s
		case layout.isPayload(key):
			e, tail := jsonscan.TailValue(frame, vstart, 2)
			if !tail {
				e = p.Skip()
			}
			f.Data = frame[vstart:e]
			if tail && f.Key != nil {
				return e, true, nil
			}
			p.SkipTo(e)
		default:
			p.Skip()
		}
	}
	if p.Err() != nil {
		return 0, false, ErrMalformed
	}
	end, err = jsonscan.SkipValue(frame, start)
	if err != nil {
		return 0, false, ErrMalformed
	}
	return end, false, nil
}

// EachElement calls fn with each element of a JSON-RPC batch array (a
// KindBatch frame).
func EachElement(batch []byte, fn func(elem []byte) bool) error {
	if err := jsonscan.Elements(batch, 0, fn); err != nil {
		return ErrMalformed
	}
	return nil
}
