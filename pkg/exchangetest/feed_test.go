package exchangetest_test

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/deribit"
	"github.com/wsfan/wsfan/pkg/ethereal"
	"github.com/wsfan/wsfan/pkg/ethereum"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/thalex"
)

func TestFeedTopics(t *testing.T) {
	cases := map[exchangetest.Dialect]string{
		thalex.Name:   "ticker.BTC-PERPETUAL.raw book.BTC-PERPETUAL.none.10.100ms ticker.ETH-PERPETUAL.raw book.ETH-PERPETUAL.none.10.100ms",
		deribit.Name:  "ticker.BTC-PERPETUAL.100ms book.BTC-PERPETUAL.100ms ticker.ETH-PERPETUAL.100ms book.ETH-PERPETUAL.100ms",
		ethereum.Name: "newHeads",
		ethereal.Name: "Ticker:BTCUSD L2Book:BTCUSD Ticker:ETHUSD L2Book:ETHUSD",
	}
	for d, want := range cases {
		srv := newServer(t, d)
		require.EqualValues(t, want, strings.Join(srv.FeedTopics(), " "))
	}
	srv := newServer(t, thalex.Name)
	srv.StartFeed(exchangetest.FeedOptions{Instruments: []string{"SOL-PERPETUAL"}, Interval: time.Hour})
	require.EqualValues(t, "ticker.SOL-PERPETUAL.raw book.SOL-PERPETUAL.none.10.100ms", strings.Join(srv.FeedTopics(), " "))
	srv.StopFeed()
	srv.StopFeed()
}

func TestFeedThalex(t *testing.T) {
	srv := newServer(t, thalex.Name)
	srv.StartFeed(exchangetest.FeedOptions{Interval: 5 * time.Millisecond})
	ws := dial(t, srv)
	topics, _ := json.Marshal(srv.FeedTopics())
	testutil.Send(t, ws, `{"id":1,"method":"public/subscribe","params":{"channels":`+string(topics)+`}}`)
	testutil.Recv(t, ws)
	seen := map[string]bool{}
	for i := 0; i < 100 && len(seen) < 4; i++ {
		var n struct {
			Channel      string         `json:"channel_name"`
			Snapshot     bool           `json:"snapshot"`
			Notification map[string]any `json:"notification"`
		}
		require.NoError(t, json.Unmarshal([]byte(testutil.Recv(t, ws)), &n))
		first := !seen[n.Channel]
		seen[n.Channel] = true
		if strings.HasPrefix(n.Channel, "ticker.") {
			if n.Notification["best_bid_price"].(float64) >= n.Notification["best_ask_price"].(float64) {
				t.Fatalf("crossed ticker %v", n.Notification)
			}
			continue
		}
		// A book: the whole of it first, marked in the envelope, then changes.
		require.Equal(t, first, n.Snapshot, "only a book's first message is its snapshot")
		if first && len(n.Notification["bid_changes"].([]any)) != 10 {
			t.Fatalf("book snapshot %v", n.Notification)
		}
	}
	require.EqualValues(t, 4, len(seen))
}

func TestFeedDeribitChangeIDs(t *testing.T) {
	srv := newServer(t, deribit.Name)
	srv.StartFeed(exchangetest.FeedOptions{Instruments: []string{"BTC-PERPETUAL"}, Interval: 5 * time.Millisecond})
	ws := dial(t, srv)
	testutil.Send(t, ws, `{"jsonrpc":"2.0","id":1,"method":"public/subscribe","params":{"channels":["book.BTC-PERPETUAL.100ms"]}}`)
	testutil.Recv(t, ws)
	var last int64
	for i := range 20 {
		var n struct {
			Params struct {
				Data struct {
					Type   string  `json:"type"`
					Change int64   `json:"change_id"`
					Prev   int64   `json:"prev_change_id"`
					Bids   [][]any `json:"bids"`
				} `json:"data"`
			} `json:"params"`
		}
		require.NoError(t, json.Unmarshal([]byte(testutil.Recv(t, ws)), &n))
		b := n.Params.Data
		if i == 0 {
			require.EqualValues(t, "snapshot", b.Type)
		} else {
			require.EqualValues(t, "change", b.Type)
			require.EqualValues(t, last, b.Prev)
		}
		if b.Change <= last || len(b.Bids) == 0 {
			t.Fatalf("book %+v after %d", b, last)
		}
		last = b.Change
	}
}

func TestFeedEthereumHeads(t *testing.T) {
	srv := newServer(t, ethereum.Name)
	srv.StartFeed(exchangetest.FeedOptions{Interval: 5 * time.Millisecond})
	ws := dial(t, srv)
	testutil.Send(t, ws, `{"jsonrpc":"2.0","id":1,"method":"eth_subscribe","params":["newHeads"]}`)
	testutil.Recv(t, ws)
	var last uint64
	var lastHash string
	for i := range 5 {
		var n struct {
			Params struct {
				Result struct {
					Number     string `json:"number"`
					Hash       string `json:"hash"`
					ParentHash string `json:"parentHash"`
				} `json:"result"`
			} `json:"params"`
		}
		require.NoError(t, json.Unmarshal([]byte(testutil.Recv(t, ws)), &n))
		h := n.Params.Result
		num, err := strconv.ParseUint(strings.TrimPrefix(h.Number, "0x"), 16, 64)
		require.NoError(t, err)
		if i > 0 {
			require.EqualValues(t, last+1, num)
			require.EqualValues(t, lastHash, h.ParentHash)
		}
		last, lastHash = num, h.Hash
	}
}

func TestFeedEthereal(t *testing.T) {
	srv := newServer(t, ethereal.Name)
	srv.StartFeed(exchangetest.FeedOptions{Interval: 5 * time.Millisecond})
	ws := dial(t, srv)
	testutil.Send(t, ws, `{"event":"subscribe","data":{"type":"L2Book","symbol":"ETHUSD"}}`)
	require.Equal(t, `{"ok":true}`, testutil.Recv(t, ws))
	var lastT int64
	for i := range 10 {
		var n struct {
			E    string `json:"e"`
			Data struct {
				S  string      `json:"s"`
				T  int64       `json:"t"`
				PT int64       `json:"pt"`
				A  [][2]string `json:"a"`
			} `json:"data"`
		}
		require.NoError(t, json.Unmarshal([]byte(testutil.Recv(t, ws)), &n))
		require.EqualValues(t, "L2Book", n.E)
		require.EqualValues(t, "ETHUSD", n.Data.S)
		if i > 0 && n.Data.PT != 0 { // pt is optional: the feed leaves it out of every fourth change
			require.EqualValues(t, lastT, n.Data.PT)
		}
		if n.Data.T <= n.Data.PT || (i == 0 && len(n.Data.A) != 20) {
			t.Fatalf("book %+v", n.Data)
		}
		lastT = n.Data.T
	}
}
