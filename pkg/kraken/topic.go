package kraken

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/wsfan/wsfan/pkg/protocol"
)

// A topic names one subscription of Kraken's Spot WebSocket v2
// (https://docs.kraken.com/api/docs/websocket-v2/book and the other
// channel pages: a subscribe's params are a channel, a list of symbols
// and, by channel, a depth or an interval). wsfan writes it
//
//	CHANNEL:SYMBOL             "ticker:BTC/USD", "trade:BTC/USD"
//	CHANNEL:SYMBOL:N           "book:BTC/USD:10" (depth), "ohlc:BTC/USD:1" (interval, minutes)
//	CHANNEL                    a channel of no symbol: "instrument", "executions", "balances"
//
// A symbol holds a "/" (BTC/USD), never a ":". A book's depth is left to
// Kraken's default (10) when the topic names none.
type topic struct {
	channel, symbol string
	param           int  // depth (book) or interval (ohlc)
	hasParam        bool // the topic names param
}

// symbolChannels are the channels subscribed by symbol, with the name of
// the number a topic may add.
var symbolChannels = map[string]string{"book": "depth", "ticker": "", "trade": "", "ohlc": "interval"}

// plainChannels are the channels of no symbol; privateChannels need a
// token (https://docs.kraken.com/api/docs/websocket-v2/executions,
// .../balances).
var (
	plainChannels   = map[string]bool{"instrument": true, "executions": true, "balances": true}
	privateChannels = map[string]bool{"executions": true, "balances": true}
)

// bookDepths and ohlcIntervals are the values the pages list.
var (
	bookDepths    = map[int]bool{10: true, 25: true, 100: true, 500: true, 1000: true}
	ohlcIntervals = map[int]bool{1: true, 5: true, 15: true, 30: true, 60: true, 240: true, 1440: true, 10080: true, 21600: true}
)

// defaultDepth is a book's depth when its topic names none.
const defaultDepth = 10

// parseTopic reads a topic name.
func parseTopic(name string) (topic, error) {
	bad := func(why string) (topic, error) {
		return topic{}, fmt.Errorf("%w: kraken topic %q: %s; want CHANNEL, CHANNEL:SYMBOL or CHANNEL:SYMBOL:N (book:BTC/USD:10)", protocol.ErrInvalidTopic, name, why)
	}
	if strings.ContainsAny(name, "\"\\ \t\r\n") {
		return bad("a quote, backslash or space")
	}
	parts := strings.Split(name, ":")
	t := topic{channel: parts[0]}
	if plainChannels[t.channel] {
		if len(parts) != 1 {
			return bad(t.channel + " takes no symbol")
		}
		return t, nil
	}
	numName, known := symbolChannels[t.channel]
	switch {
	case !known:
		return bad("unknown channel")
	case len(parts) < 2 || parts[1] == "":
		return bad("no symbol")
	case len(parts) > 3 || (len(parts) == 3 && numName == ""):
		return bad("too many parts")
	}
	t.symbol = parts[1]
	if len(parts) == 3 {
		n, err := strconv.Atoi(parts[2])
		valid := bookDepths
		if t.channel == "ohlc" {
			valid = ohlcIntervals
		}
		if err != nil || !valid[n] || parts[2] != strconv.Itoa(n) {
			return bad("not a " + numName + " Kraken offers")
		}
		t.param, t.hasParam = n, true
	}
	return t, nil
}

// name is the topic as parseTopic reads it.
func (t topic) name() string {
	switch {
	case t.symbol == "":
		return t.channel
	case t.hasParam:
		return t.channel + ":" + t.symbol + ":" + strconv.Itoa(t.param)
	}
	return t.channel + ":" + t.symbol
}

// key is the routing key of the topic's messages, what routeKey reads
// from a message: the channel, its symbol, and an ohlc's interval, which
// its messages carry (a book's depth they do not).
func (t topic) key() string {
	if t.channel == "ohlc" && t.hasParam {
		return t.name()
	}
	if t.channel == "ohlc" {
		return t.channel + ":" + t.symbol + ":1" // Kraken's default interval
	}
	if t.symbol == "" {
		return t.channel
	}
	return t.channel + ":" + t.symbol
}

// depth is the depth a book topic holds.
func (t topic) depth() int {
	if t.hasParam {
		return t.param
	}
	return defaultDepth
}

// group is what the topics one request carries share: the channel and
// its number.
func (t topic) group() string {
	if t.hasParam {
		return t.channel + ":" + strconv.Itoa(t.param)
	}
	return t.channel
}
