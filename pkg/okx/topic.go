package okx

import (
	"fmt"
	pathpkg "path"
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

// The URL paths of OKX's three WebSocket services
// (https://www.okx.com/docs-v5/en/#overview-production-trading-services:
// wss://ws.okx.com:8443/ws/v5/public, …/private, …/business; the same
// paths on wspap.okx.com for demo trading). A topic names the one that
// serves it (protocol.Topic.Path): on a connection to another, the client
// refuses it before sending it, naming the URL to use.
const (
	PublicPath   = "/ws/v5/public"
	PrivatePath  = "/ws/v5/private"
	BusinessPath = "/ws/v5/business"
)

// privateChannels are OKX's channels that need a logged-in connection
// (https://www.okx.com/docs-v5/en/#overview-websocket-subscribe: "Private
// channels -- including account channel, order channel, and position
// channel, etc -- require log in"): the trading account's and the trade
// section's channels, the private ones of /ws/v5/business, and the
// login-only books.
var privateChannels = map[string]bool{
	"account": true, "positions": true, "balance_and_position": true,
	"liquidation-warning": true, "account-greeks": true, "orders": true, "fills": true,
	"orders-algo": true, "algo-advance": true, "deposit-info": true, "withdrawal-info": true,
	"grid-orders-spot": true, "grid-orders-contract": true, "grid-orders-moon": true,
	"grid-positions": true, "grid-sub-orders": true,
	"rfqs": true, "quotes": true, "struc-block-trades": true,
	"books-l2-tbt": true, "books50-l2-tbt": true,
}

// loginBooks are the book channels of /ws/v5/public that need a login
// (OKX's announcement of 14 April 2022,
// https://www.okx.com/help/5399923178253: books-l2-tbt for VIP5 and
// above, books50-l2-tbt for VIP4 and above, "Identity verification
// required before subscription"). They go in subscribe requests of their
// own, so the refusal of a tier too low (64003, naming no argument)
// refuses them and never the public topics beside them.
var loginBooks = map[string]bool{"books-l2-tbt": true, "books50-l2-tbt": true}

// businessChannels are the channels /ws/v5/business alone serves since
// 20 June 2023 (OKX's notice "Changes to V5 API WebSocket subscription
// parameter and URL", 24 April 2023,
// https://www.okx.com/help-center/changes-to-v5-api-websocket-subscription-parameter-and-url:
// block trading, algo and grid orders, candlesticks, all trades, deposit
// and withdrawal information), beside the candlestick families
// (businessPrefixes).
var businessChannels = map[string]bool{
	"rfqs": true, "quotes": true, "struc-block-trades": true, "public-struc-block-trades": true,
	"public-block-trades": true, "block-tickers": true,
	"orders-algo": true, "algo-advance": true, "grid-orders-spot": true, "grid-orders-contract": true,
	"grid-orders-moon": true, "grid-positions": true, "grid-sub-orders": true,
	"trades-all": true, "deposit-info": true, "withdrawal-info": true,
}

// businessPrefixes begin the candlestick channels of every bar
// ("candle1m", "mark-price-candle1H", "index-candle1D", …).
var businessPrefixes = [...]string{"candle", "mark-price-candle", "index-candle"}

// publicChannels are the channels of /ws/v5/public this package knows
// (the public data and order book trading sections of the API
// documentation). A channel in none of these lists names no path: the
// client sends it wherever it is dialled, and OKX answers.
var publicChannels = map[string]bool{
	"tickers": true, "trades": true, "books": true, "books5": true, "bbo-tbt": true,
	"books-l2-tbt": true, "books50-l2-tbt": true, "instruments": true, "open-interest": true,
	"funding-rate": true, "price-limit": true, "opt-summary": true, "estimated-price": true,
	"mark-price": true, "index-tickers": true, "liquidation-orders": true,
}

// channelPath is the path of the service that serves channel, "" when
// this package does not know it.
func channelPath(channel string) string {
	switch {
	case businessChannels[channel]:
		return BusinessPath
	case publicChannels[channel]:
		return PublicPath
	case privateChannels[channel]:
		return PrivatePath
	}
	for _, p := range businessPrefixes {
		if strings.HasPrefix(channel, p) {
			return BusinessPath
		}
	}
	return ""
}

// servedOn reports whether a connection to the URL path path serves
// topic: any path of no OKX service does (a test server's, a proxy's),
// and the service's own.
func servedOn(path, topic string) bool {
	want := channelPath(channelOf(topic))
	return want == "" || path == want || pathpkg.Dir(path) != pathpkg.Dir(want)
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
