package okx

import (
	"fmt"
	"slices"
	"strings"

	"github.com/wsfan/wsfan/internal/jsonscan"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// A topic names one subscription argument of OKX's v5 WebSocket API
// (https://www.okx.com/docs-v5/en/#overview-websocket-subscribe: an
// argument is an object with a channel and, by channel, an instId,
// instFamily, instType or ccy). wsfan writes it
//
//	CHANNEL                      a channel of no instrument ("account")
//	CHANNEL:INSTID               "tickers:BTC-USDT", "books:BTC-USDT"
//	CHANNEL:KEY=VALUE[,KEY=VALUE] any other argument ("orders:instType=ANY")
//
// and routes a push by the argument it carries back (arg): its channel
// and the first of instId, instFamily, instType and ccy it names
// (routeFields), so a push whose arg adds fields of its own (a private
// channel's uid) still finds its topic.
type arg struct {
	channel string
	fields  [][2]string // key, value: in the order written
}

// routeFields are the argument fields a push is routed by, the first
// present winning.
var routeFields = [...]string{"instId", "instFamily", "instType", "ccy"}

// parseTopic reads a topic name.
func parseTopic(name string) (arg, error) {
	channel, rest, hasRest := strings.Cut(name, ":")
	a := arg{channel: channel}
	bad := func(why string) (arg, error) {
		return arg{}, fmt.Errorf("%w: okx topic %q: %s; want CHANNEL, CHANNEL:INSTID or CHANNEL:KEY=VALUE,…", protocol.ErrInvalidTopic, name, why)
	}
	if channel == "" || strings.ContainsAny(name, "\"\\ \t\r\n") {
		return bad("no channel, or a quote, backslash or space")
	}
	if !hasRest {
		return a, nil
	}
	if !strings.Contains(rest, "=") {
		if rest == "" {
			return bad("an empty instrument")
		}
		a.fields = [][2]string{{"instId", rest}}
		return a, nil
	}
	if strings.HasPrefix(rest, "instId=") && !strings.Contains(rest, ",") {
		return bad("write an instrument alone as CHANNEL:INSTID") // one spelling a topic
	}
	for _, kv := range strings.Split(rest, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" || v == "" || k == "channel" {
			return bad("a field that is not KEY=VALUE")
		}
		if slices.ContainsFunc(a.fields, func(f [2]string) bool { return f[0] == k }) {
			return bad("field " + k + " given twice")
		}
		a.fields = append(a.fields, [2]string{k, v})
	}
	return a, nil
}

// key is the routing key of the argument: what routeKey reads from a
// push's arg.
func (a arg) key() string {
	for _, rf := range routeFields {
		for _, f := range a.fields {
			if f[0] == rf && f[1] != "" {
				return keyOf(a.channel, rf, f[1])
			}
		}
	}
	return a.channel
}

// keyOf is the routing key of channel with field's value: CHANNEL:INSTID
// for an instrument, CHANNEL:FIELD=VALUE for the others.
func keyOf(channel, field, value string) string {
	if field == "instId" {
		return channel + ":" + value
	}
	return channel + ":" + field + "=" + value
}

// appendJSON appends the argument object.
func (a arg) appendJSON(dst []byte) []byte {
	dst = append(dst, `{"channel":`...)
	dst = protocol.AppendJSONString(dst, a.channel)
	for _, f := range a.fields {
		dst = append(dst, ',')
		dst = protocol.AppendJSONString(dst, f[0])
		dst = append(dst, ':')
		dst = protocol.AppendJSONString(dst, f[1])
	}
	return append(dst, '}')
}

// text is the argument as OKX's error messages spell it, such as
// "channel:tickers,instId:BTC-USDT" (60018, "Wrong URL or {0} doesn't
// exist").
func (a arg) text() string {
	var b strings.Builder
	b.WriteString("channel:" + a.channel)
	for _, f := range a.fields {
		b.WriteString("," + f[0] + ":" + f[1])
	}
	return b.String()
}

// appendRouteKey appends the routing key of the argument object raw, a
// push's or an acknowledgement's arg; ok is false when raw is not an
// object with a string channel, or names a routing field with a value
// that is not a string.
func appendRouteKey(dst, raw []byte) (key []byte, ok bool) {
	var channel []byte
	var route [len(routeFields)][]byte
	m := jsonscan.Object(raw, 0)
	for k, start, more := m.Next(); more; k, start, more = m.Next() {
		end := m.Skip()
		if string(k) == "channel" {
			channel = raw[start:end]
			continue
		}
		for i, rf := range routeFields {
			if string(k) == rf {
				route[i] = raw[start:end]
			}
		}
	}
	if m.Err() != nil || !jsonscan.AtEnd(raw, m.End()) {
		return dst, false
	}
	if key, ok = jsonscan.AppendString(dst, channel); !ok {
		return dst, false
	}
	for i, v := range route {
		if v == nil {
			continue
		}
		val, isString := jsonscan.String(v, nil)
		if !isString {
			return dst, false
		}
		if len(val) == 0 {
			continue // an empty value names nothing: the next field does
		}
		key = append(key, ':')
		if i > 0 {
			key = append(append(key, routeFields[i]...), '=')
		}
		return append(key, val...), true
	}
	return key, true
}

// privateChannels are OKX's channels that need a logged-in connection
// (https://www.okx.com/docs-v5/en/#overview-websocket-subscribe: "Private
// channels -- including account channel, order channel, and position
// channel, etc -- require log in"): the trading account's and the trade
// section's WebSocket channels of the API documentation.
var privateChannels = map[string]bool{
	"account": true, "positions": true, "balance_and_position": true,
	"liquidation-warning": true, "account-greeks": true, "orders": true,
	"orders-algo": true, "algo-advance": true, "fills": true,
	"deposit-info": true, "withdrawal-info": true,
}

// chainedBooks are the book channels whose pushes chain by
// prevSeqId ("Only applicable to books, books-l2-tbt, books50-l2-tbt",
// https://www.okx.com/docs-v5/en/#order-book-trading-market-data-ws-order-book-channel):
// a snapshot first (action "snapshot"), then changes (action "update").
var chainedBooks = map[string]bool{"books": true, "books-l2-tbt": true, "books50-l2-tbt": true}

// wholeBooks are the book channels every push of which is the whole
// book, of 5 levels or 1 ("books5: … Snapshot data will be pushed every
// 100 ms", "bbo-tbt: … Snapshot data will be pushed every 10 ms"), with
// no action.
var wholeBooks = map[string]bool{"books5": true, "bbo-tbt": true}

// channelOf returns the channel of a topic name.
func channelOf(topic string) string {
	channel, _, _ := strings.Cut(topic, ":")
	return channel
}
