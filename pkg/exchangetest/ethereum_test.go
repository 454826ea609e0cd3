package exchangetest_test

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/ethereum"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/protocol"
)

var ethSubID = regexp.MustCompile(`^0x[0-9a-f]{32}$`)

func TestEthereumSubscribePublish(t *testing.T) {
	srv := newServer(t, ethereum.Name)
	srv.SetRefused("newPendingTransactions")
	ws1, ws2 := dial(t, srv), dial(t, srv)

	testutil.Send(t, ws1, `{"jsonrpc":"2.0","id":1,"method":"eth_subscribe","params":["newHeads"]}`)
	id1 := testutil.RecvJSON(t, ws1)["result"].(string)
	testutil.Send(t, ws2, `{"jsonrpc":"2.0","id":1,"method":"eth_subscribe","params":["newHeads"]}`)
	id2 := testutil.RecvJSON(t, ws2)["result"].(string)
	if !ethSubID.MatchString(id1) || !ethSubID.MatchString(id2) || id1 == id2 {
		t.Fatalf("ids %q %q", id1, id2)
	}
	testutil.Send(t, ws1, `{"jsonrpc":"2.0","id":2,"method":"eth_subscribe","params":["logs", {"address": "0x1"}]}`)
	idLogs := testutil.RecvJSON(t, ws1)["result"].(string)
	testutil.Send(t, ws1, `{"jsonrpc":"2.0","id":3,"method":"eth_subscribe","params":["newPendingTransactions"]}`)
	require.EqualValues(t, -32602.0, testutil.RecvJSON(t, ws1)["error"].(map[string]any)["code"].(float64))

	require.EqualValues(t, 2, srv.Subscribers("newHeads"))
	require.EqualValues(t, 2, srv.Publish("newHeads", []byte(`{"number":"0x1"}`)))
	require.EqualValues(t, `{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"`+id1+`","result":{"number":"0x1"}}}`, testutil.Recv(t, ws1))
	require.EqualValues(t, `{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"`+id2+`","result":{"number":"0x1"}}}`, testutil.Recv(t, ws2))

	require.EqualValues(t, 1, srv.Publish(`["logs",{"address":"0x1"}]`, []byte(`{}`)))
	require.EqualValues(t, idLogs, testutil.RecvJSON(t, ws1)["params"].(map[string]any)["subscription"].(string))

	testutil.Send(t, ws1, `{"jsonrpc":"2.0","id":4,"method":"eth_unsubscribe","params":["`+id1+`"]}`)
	require.EqualValues(t, `{"jsonrpc":"2.0","id":4,"result":true}`, testutil.Recv(t, ws1))
	testutil.Send(t, ws1, `{"jsonrpc":"2.0","id":5,"method":"eth_unsubscribe","params":["`+id2+`"]}`)
	require.EqualValues(t, `{"jsonrpc":"2.0","id":5,"error":{"code":-32000,"message":"subscription not found"}}`, testutil.Recv(t, ws1),
		"another connection's id: not found, as geth answers it (rpc/handler.go)")
	require.EqualValues(t, 1, srv.Subscribers("newHeads"))
}

func TestEthereumBatch(t *testing.T) {
	srv := newServer(t, ethereum.Name, exchangetest.WithBatchCap(3))
	srv.Handle("eth_blockNumber", func(json.RawMessage) (any, *protocol.Error) { return "0x10", nil })
	ws := dial(t, srv)

	testutil.Send(t, ws, `[{"jsonrpc":"2.0","id":1,"method":"eth_subscribe","params":["newHeads"]},`+
		`{"jsonrpc":"2.0","id":2,"method":"eth_subscribe","params":["logs",{}]},`+
		`{"jsonrpc":"2.0","id":3,"method":"eth_blockNumber"}]`)
	var resps []struct {
		ID     int             `json:"id"`
		Result json.RawMessage `json:"result"`
	}
	require.NoError(t, json.Unmarshal([]byte(testutil.Recv(t, ws)), &resps))
	require.EqualValues(t, 3, len(resps))
	require.EqualValues(t, `"0x10"`, string(resps[2].Result))
	require.EqualValues(t, 1, srv.Subscribers("newHeads"))
	require.EqualValues(t, 1, srv.Subscribers(`["logs",{}]`))
	require.EqualValues(t, 1, srv.CountReceived("eth_subscribe"))
	require.EqualValues(t, 1, srv.CountReceived("eth_blockNumber"))

	testutil.Send(t, ws, `[{"id":1,"method":"a"},{"id":2,"method":"b"},{"id":3,"method":"c"},{"id":4,"method":"d"}]`)
	require.EqualValues(t, `[{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"batch too large"}}]`, testutil.Recv(t, ws))
}

// eth_blockNumber agrees with newHeads: the chain's first block before
// the feed runs, then the last head the feed made, so a program that
// reads the height and then follows the heads sees the numbers follow.
func TestEthereumBlockNumberFollowsTheHeads(t *testing.T) {
	srv := newServer(t, ethereum.Name)
	ws := dial(t, srv)
	blockNumber := func(id int) uint64 {
		t.Helper()
		testutil.Send(t, ws, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"eth_blockNumber"}`, id))
		for {
			m := testutil.RecvJSON(t, ws)
			if m["id"] == float64(id) {
				n, err := strconv.ParseUint(strings.TrimPrefix(m["result"].(string), "0x"), 16, 64)
				require.NoError(t, err)
				return n
			}
		}
	}
	before := blockNumber(1)

	srv.StartFeed(exchangetest.FeedOptions{Interval: 10 * time.Millisecond})
	defer srv.StopFeed()
	testutil.Send(t, ws, `{"jsonrpc":"2.0","id":2,"method":"eth_subscribe","params":["newHeads"]}`)
	testutil.RecvJSON(t, ws)
	var head struct {
		Params struct{ Result struct{ Number string } }
	}
	require.NoError(t, json.Unmarshal([]byte(testutil.Recv(t, ws)), &head))
	first, err := strconv.ParseUint(strings.TrimPrefix(head.Params.Result.Number, "0x"), 16, 64)
	require.NoError(t, err)
	assert.Equal(t, before+1, first, "the first head follows the height read before")
	assert.GreaterOrEqual(t, blockNumber(3), first, "the height is the heads' own")
}
