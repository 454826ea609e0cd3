package protocol

import (
	"strconv"

	"github.com/wsfan/wsfan/internal/jsonscan"
)

// AppendRPC appends a JSON-RPC 2.0 request. emptyParams stands in for nil
// params ("{}" for the exchanges, "[]" for Ethereum).
func AppendRPC(dst []byte, id uint64, method string, params []byte, emptyParams string) []byte {
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

// RPCLayout says where a JSON-RPC dialect puts a notification's routing
// key and payload inside "params": Deribit {"channel","data"} (and a
// heartbeat's "type"), Ethereum {"subscription","result"}.
type RPCLayout struct {
	Key     string // the member of a notification's params holding its routing key
	Payload string // the member of a notification's params holding its payload
	Aux     string // a second member kept whole (Deribit's heartbeat "type"); "" for none
}

// RPCFrame is what scanRPC found besides the response members it writes
// to the Frame. Each field is a member's whole value, nil when absent; a
// repeated member counts as its last occurrence, and a repeated "params"
// replaces everything found in the one before.
type RPCFrame struct {
	Method  []byte // "method", a request or notification when present
	Key     []byte // params' routing key member
	Payload []byte // params' payload member
	Aux     []byte // params' aux member
}

// ScanRPC reads a JSON-RPC frame: a response's id, result and error into
// f, the method and the params members layout names into r. Every member
// is read and checked, except a payload or result that closes the frame,
// which is sliced from the tail (see jsonscan.TailValue).
func ScanRPC(frame []byte, f *Frame, layout *RPCLayout, r *RPCFrame) error {
	m := jsonscan.Object(frame, 0)
	for key, start, ok := m.Next(); ok; key, start, ok = m.Next() {
		switch string(key) {
		case "method":
			r.Method = frame[start:m.Skip()]
		case "params":
			r.Key, r.Payload, r.Aux = nil, nil, nil
			end, err := scanParams(frame, start, layout, r)
			if err != nil {
				return err
			}
			m.SkipTo(end)
		default:
			if !ClassifyResponseMember(&m, frame, key, start, f) {
				m.Skip()
			}
		}
	}
	if m.Err() != nil || !jsonscan.AtEnd(frame, m.End()) {
		return ScanError(frame)
	}
	if r.Method != nil {
		f.ClearResponse()
		return nil
	}
	if f.Kind != KindResponse {
		return ErrUnrecognized
	}
	return nil
}

// scanParams reads a params value for the members layout names, and
// returns its end.
func scanParams(frame []byte, start int, layout *RPCLayout, r *RPCFrame) (end int, err error) {
	if frame[start] != '{' {
		end, err = jsonscan.SkipValue(frame, start)
		if err != nil {
			return 0, ErrMalformed
		}
		return end, nil
	}
	p := jsonscan.Object(frame, start)
	for key, vstart, ok := p.Next(); ok; key, vstart, ok = p.Next() {
		switch {
		case string(key) == layout.Key:
			r.Key = frame[vstart:p.Skip()]
		case string(key) == layout.Payload:
			r.Payload = frame[vstart:p.SkipTail(2)]
		case layout.Aux != "" && string(key) == layout.Aux:
			r.Aux = frame[vstart:p.Skip()]
		default:
			p.Skip()
		}
	}
	if p.Err() != nil {
		return 0, ErrMalformed
	}
	return p.End(), nil
}

// EachElement calls fn with each element of a JSON-RPC batch array (a
// KindBatch frame).
func EachElement(batch []byte, fn func(elem []byte) bool) error {
	if end, err := jsonscan.SkipValue(batch, 0); err != nil || !jsonscan.AtEnd(batch, end) {
		return ErrMalformed
	}
	if err := jsonscan.Elements(batch, 0, fn); err != nil {
		return ErrMalformed
	}
	return nil
}

// AppendBatch appends calls as one JSON-RPC batch array, call i with id
// ids[i], each encoded by p.AppendRequest: the frame a venue whose
// Venue.MaxBatch is not 0 answers with one array of the responses.
func AppendBatch(p Protocol, dst []byte, ids []uint64, calls []Call) ([]byte, error) {
	dst = append(dst, '[')
	for i, call := range calls {
		if i > 0 {
			dst = append(dst, ',')
		}
		var err error
		if dst, err = p.AppendRequest(dst, ids[i], call.Method, call.Params); err != nil {
			return nil, err
		}
	}
	return append(dst, ']'), nil
}
