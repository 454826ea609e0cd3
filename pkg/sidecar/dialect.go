package sidecar

import (
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"unicode/utf8"
)

// dialect is what the sidecar needs to speak a dialect to local clients:
// the notification frame around a payload, and the response envelope.
// The upstream side is pkg/protocol's, through the client.
type dialect uint8

const (
	dialectThalex dialect = iota
	dialectDeribit
	dialectEthereum
	dialectEthereal
)

func dialectOf(name string) dialect {
	switch name {
	case "deribit":
		return dialectDeribit
	case "ethereum":
		return dialectEthereum
	case "ethereal":
		return dialectEthereal
	}
	return dialectThalex
}

// rpc reports whether the dialect has request ids and responses.
func (d dialect) rpc() bool { return d != dialectEthereal }

// batches reports whether the dialect accepts JSON-RPC batch arrays.
func (d dialect) batches() bool { return d == dialectThalex || d == dialectEthereum }

// notification returns what goes before and after a payload in the
// notification frame of topic; localID is the topic's subscription id
// (Ethereum only). Ethereal's payload is the whole frame.
func (d dialect) notification(topic, localID string) (prefix, suffix []byte) {
	switch d {
	case dialectThalex:
		prefix = appendJSONString([]byte(`{"channel_name":`), topic)
		return append(prefix, `,"notification":`...), []byte("}")
	case dialectDeribit:
		prefix = appendJSONString([]byte(`{"jsonrpc":"2.0","method":"subscription","params":{"channel":`), topic)
		return append(prefix, `,"data":`...), []byte("}}")
	case dialectEthereum:
		prefix = appendJSONString([]byte(`{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":`), localID)
		return append(prefix, `,"result":`...), []byte("}}")
	}
	return nil, nil
}

// appendResult appends a response carrying result (raw JSON) to dst.
func (d dialect) appendResult(dst, id, result []byte) []byte {
	dst = d.appendEnvelope(dst, id)
	dst = append(dst, `,"result":`...)
	dst = append(dst, result...)
	return append(dst, '}')
}

// appendError appends an error response; data is raw JSON or nil.
func (d dialect) appendError(dst, id []byte, code int, message string, data []byte) []byte {
	dst = d.appendEnvelope(dst, id)
	dst = append(dst, `,"error":{"code":`...)
	dst = strconv.AppendInt(dst, int64(code), 10)
	dst = append(dst, `,"message":`...)
	dst = appendJSONString(dst, message)
	if len(data) > 0 {
		dst = append(dst, `,"data":`...)
		dst = append(dst, data...)
	}
	return append(dst, "}}"...)
}

func (d dialect) appendEnvelope(dst, id []byte) []byte {
	if len(id) == 0 {
		id = []byte("null")
	}
	if d == dialectThalex {
		dst = append(dst, `{"id":`...)
	} else {
		dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	}
	return append(dst, id...)
}

// Error codes of answers the sidecar makes itself.
const (
	codeParse          = -32700
	codeInvalidRequest = -32600
	codeNotFound       = -32601
	codeInvalidParams  = -32602
	codeUpstream       = -32000 // the upstream failed the call: timeout, lost connection
	codeBlocked        = -32001 // the method is not forwarded
)

// newLocalID returns a subscription id in the form an Ethereum node uses.
func newLocalID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return "0x" + hex.EncodeToString(b[:])
}

// appendJSONString appends s as a JSON string.
func appendJSONString(dst []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				dst = append(dst, `\ufffd`...)
			} else {
				dst = append(dst, s[i:i+size]...)
			}
			i += size
			continue
		}
		switch {
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
		case c < 0x20:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		default:
			dst = append(dst, c)
		}
		i++
	}
	return append(dst, '"')
}
