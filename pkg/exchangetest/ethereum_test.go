package exchangetest_test

import (
	"encoding/json"
	"regexp"
	"testing"

	"github.com/wsfan/wsfan/pkg/exchangetest"
)

var ethSubID = regexp.MustCompile(`^0x[0-9a-f]{32}$`)

func TestEthereumSubscribePublish(t *testing.T) {
	srv := newServer(t, exchangetest.Ethereum)
	srv.SetRefused("newPendingTransactions")
	ws1, ws2 := dial(t, srv), dial(t, srv)

	send(t, ws1, `{"jsonrpc":"2.0","id":1,"method":"eth_subscribe","params":["newHeads"]}`)
	id1 := recvJSON(t, ws1)["result"].(string)
	send(t, ws2, `{"jsonrpc":"2.0","id":1,"method":"eth_subscribe","params":["newHeads"]}`)
	id2 := recvJSON(t, ws2)["result"].(string)
	if !ethSubID.MatchString(id1) || !ethSubID.MatchString(id2) || id1 == id2 {
		t.Fatalf("ids %q %q", id1, id2)
	}
	send(t, ws1, `{"jsonrpc":"2.0","id":2,"method":"eth_subscribe","params":["logs", {"address": "0x1"}]}`)
	idLogs := recvJSON(t, ws1)["result"].(string)
	send(t, ws1, `{"jsonrpc":"2.0","id":3,"method":"eth_subscribe","params":["newPendingTransactions"]}`)
	eq(t, -32602.0, recvJSON(t, ws1)["error"].(map[string]any)["code"].(float64))

	eq(t, 2, srv.Subscribers("newHeads"))
	eq(t, 2, srv.Publish("newHeads", []byte(`{"number":"0x1"}`)))
	eq(t, `{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"`+id1+`","result":{"number":"0x1"}}}`, recv(t, ws1))
	eq(t, `{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"`+id2+`","result":{"number":"0x1"}}}`, recv(t, ws2))

	eq(t, 1, srv.Publish(`["logs",{"address":"0x1"}]`, []byte(`{}`)))
	eq(t, idLogs, recvJSON(t, ws1)["params"].(map[string]any)["subscription"].(string))

	send(t, ws1, `{"jsonrpc":"2.0","id":4,"method":"eth_unsubscribe","params":["`+id1+`"]}`)
	eq(t, `{"jsonrpc":"2.0","id":4,"result":true}`, recv(t, ws1))
	send(t, ws1, `{"jsonrpc":"2.0","id":5,"method":"eth_unsubscribe","params":["`+id2+`"]}`)
	eq(t, `{"jsonrpc":"2.0","id":5,"result":false}`, recv(t, ws1))
	eq(t, 1, srv.Subscribers("newHeads"))
}

func TestEthereumBatch(t *testing.T) {
	srv := newServer(t, exchangetest.Ethereum, exchangetest.WithBatchCap(3))
	srv.Handle("eth_blockNumber", func(json.RawMessage) (any, *exchangetest.RPCError) { return "0x10", nil })
	ws := dial(t, srv)

	send(t, ws, `[{"jsonrpc":"2.0","id":1,"method":"eth_subscribe","params":["newHeads"]},`+
		`{"jsonrpc":"2.0","id":2,"method":"eth_subscribe","params":["logs",{}]},`+
		`{"jsonrpc":"2.0","id":3,"method":"eth_blockNumber"}]`)
	var resps []struct {
		ID     int             `json:"id"`
		Result json.RawMessage `json:"result"`
	}
	must(t, json.Unmarshal([]byte(recv(t, ws)), &resps))
	eq(t, 3, len(resps))
	eq(t, `"0x10"`, string(resps[2].Result))
	eq(t, 1, srv.Subscribers("newHeads"))
	eq(t, 1, srv.Subscribers(`["logs",{}]`))
	eq(t, 1, srv.CountReceived("eth_subscribe"))
	eq(t, 1, srv.CountReceived("eth_blockNumber"))

	send(t, ws, `[{"id":1,"method":"a"},{"id":2,"method":"b"},{"id":3,"method":"c"},{"id":4,"method":"d"}]`)
	eq(t, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"batch too large"}}`, recv(t, ws))
}
