package protocol

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"
)

// etherealServer is Ethereal's stream half: subscribe and unsubscribe
// events without ids or acknowledgements, and notifications
// {"e":TYPE,"t":MS,"data":DATA}. It answers nothing.
type etherealServer struct{}

// EtherealServer returns the server half of the Ethereal dialect.
func EtherealServer() Server { return etherealServer{} }

func (etherealServer) Name() string           { return "ethereal" }
func (etherealServer) RPC() bool              { return false }
func (etherealServer) Batches() bool          { return false }
func (etherealServer) Private(string) bool    { return false }
func (etherealServer) SubscriptionID() string { return "" }

// etherealRequest is a client's frame,
// {"event":"subscribe","data":{"type":"L2Book","symbol":"BTCUSD"}}.
type etherealRequest struct {
	Event string `json:"event"`
	Data  struct {
		Type         string `json:"type"`
		Symbol       string `json:"symbol"`
		SubaccountID string `json:"subaccountId"`
	} `json:"data"`
}

// ParseFrame reads one event; its topic is "TYPE:SYMBOL" or
// "TYPE:SUBACCOUNT_ID", as NewTopic takes it.
func (etherealServer) ParseFrame(dst []Incoming, frame []byte) ([]Incoming, bool, *RequestError) {
	var ev etherealRequest
	if json.Unmarshal(frame, &ev) != nil {
		return dst, false, &RequestError{Code: CodeParseError, Message: "parse error"}
	}
	req := Incoming{Method: ev.Event}
	switch ev.Event {
	case "subscribe":
		req.Op = OpSubscribe
	case "unsubscribe":
		req.Op = OpUnsubscribe
	default:
		return append(dst, req), false, nil
	}
	key := ev.Data.Symbol
	if key == "" {
		key = ev.Data.SubaccountID
	}
	if ev.Data.Type == "" || key == "" {
		req.Err = &RequestError{Code: CodeInvalidParams, Message: `invalid params: want {"type":T,"symbol":S} or {"type":T,"subaccountId":ID}`}
	} else {
		req.Topics = []string{ev.Data.Type + ":" + key}
	}
	return append(dst, req), false, nil
}

func (etherealServer) AppendResult(dst, _, _ []byte) []byte                        { return dst }
func (etherealServer) AppendError(dst, _ []byte, _ int, _ string, _ []byte) []byte { return dst }
func (etherealServer) AppendSubscribed(dst []byte, _ []string) []byte              { return dst }
func (etherealServer) AppendUnsubscribed(dst []byte, _ []string) []byte            { return dst }
func (etherealServer) AppendHeartbeat(dst []byte) []byte                           { return dst }
func (etherealServer) AppendReconnectNotice(dst []byte) []byte                     { return dst }

// AppendNotification appends the event of topic's type carrying data,
// stamped with the current time.
func (etherealServer) AppendNotification(dst []byte, topic, _ string, data []byte) []byte {
	typ, _, _ := strings.Cut(topic, ":")
	dst = append(dst, `{"e":`...)
	dst = AppendJSONString(dst, typ)
	dst = append(dst, `,"t":`...)
	dst = strconv.AppendInt(dst, time.Now().UnixMilli(), 10)
	dst = append(dst, `,"data":`...)
	dst = append(dst, data...)
	return append(dst, '}')
}

// Envelope is empty: an Ethereal notification's payload is the whole
// frame.
func (etherealServer) Envelope(string, string) (prefix, suffix []byte) { return nil, nil }
