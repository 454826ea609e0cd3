package protocol_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/pkg/deribit"
	"github.com/wsfan/wsfan/pkg/ethereal"
	"github.com/wsfan/wsfan/pkg/ethereum"
	"github.com/wsfan/wsfan/pkg/okx"
	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/thalex"
)

func TestClassify(t *testing.T) {
	tests := []struct {
		name    string
		proto   protocol.Protocol
		frame   string
		kind    protocol.Kind
		id      uint64
		key     string
		data    string
		result  string
		errObj  string
		event   protocol.Event
		wantErr error
	}{
		{name: "thalex notification", proto: thalex.Protocol(),
			frame: `{"channel_name":"ticker.BTC-PERPETUAL.raw","notification":{"mark_price":68000.5,"b":[1,2]}}`,
			kind:  protocol.KindNotification, key: "ticker.BTC-PERPETUAL.raw", data: `{"mark_price":68000.5,"b":[1,2]}`},
		{name: "thalex notification spaced and reordered", proto: thalex.Protocol(),
			frame: "{ \"notification\" : {\"a\":\"}\"} ,\n \"channel_name\" : \"t\" }",
			kind:  protocol.KindNotification, key: "t", data: `{"a":"}"}`},
		{name: "thalex notification with a trailing scalar member", proto: thalex.Protocol(),
			frame: `{"channel_name":"book","notification":{"bids":[]},"snapshot":true}`,
			kind:  protocol.KindNotification, key: "book", data: `{"bids":[]}`},
		{name: "thalex array payload", proto: thalex.Protocol(),
			frame: `{"channel_name":"trades","notification":[{"p":1},{"p":2}]}`,
			kind:  protocol.KindNotification, key: "trades", data: `[{"p":1},{"p":2}]`},
		{name: "thalex response", proto: thalex.Protocol(),
			frame: `{"id":2,"result":["ticker.BTC-PERPETUAL.raw"]}`,
			kind:  protocol.KindResponse, id: 2, result: `["ticker.BTC-PERPETUAL.raw"]`},
		{name: "thalex scalar result", proto: thalex.Protocol(),
			frame: `{"id":7,"result":"ok"}`, kind: protocol.KindResponse, id: 7, result: `"ok"`},
		{name: "thalex error", proto: thalex.Protocol(),
			frame: `{"id":2,"error":{"code":4,"message":"throttle exceeded"}}`,
			kind:  protocol.KindResponse, id: 2, errObj: `{"code":4,"message":"throttle exceeded"}`},
		{name: "thalex system reconnect", proto: thalex.Protocol(),
			frame: `{"channel_name":"system","notification":{"event":"reconnect"}}`,
			kind:  protocol.KindEvent, key: "system", data: `{"event":"reconnect"}`, event: protocol.EventReconnect},
		{name: "thalex escaped channel routes decoded", proto: thalex.Protocol(),
			frame: `{"channel_name":"ticker.\u0042TC","notification":{"x":1}}`,
			kind:  protocol.KindNotification, key: "ticker.BTC", data: `{"x":1}`},
		{name: "thalex member after the payload", proto: thalex.Protocol(),
			frame: `{"channel_name":"t","notification":{"x":1},"meta":{"y":{}}}`,
			kind:  protocol.KindNotification, key: "t", data: `{"x":1}`},
		{name: "thalex repeated channel: the last counts", proto: thalex.Protocol(),
			frame: `{"channel_name":"a","notification":{"x":1},"channel_name":"b"}`,
			kind:  protocol.KindNotification, key: "b", data: `{"x":1}`},
		{name: "thalex reconnect only from the event member", proto: thalex.Protocol(),
			frame: `{"channel_name":"system","notification":{"event":"other","note":"reconnect"}}`,
			kind:  protocol.KindEvent, key: "system", data: `{"event":"other","note":"reconnect"}`},
		{name: "thalex garbage", proto: thalex.Protocol(), frame: `{"channel_name":`, wantErr: protocol.ErrMalformed},
		{name: "thalex not an object", proto: thalex.Protocol(), frame: `[1,2]`, wantErr: protocol.ErrUnrecognized},
		{name: "thalex unknown shape", proto: thalex.Protocol(), frame: `{"hello":"world"}`, wantErr: protocol.ErrUnrecognized},

		{name: "deribit notification", proto: deribit.Protocol(),
			frame: `{"jsonrpc":"2.0","method":"subscription","params":{"channel":"book.BTC-PERPETUAL.100ms","data":{"change_id":5,"prev_change_id":4}}}`,
			kind:  protocol.KindNotification, key: "book.BTC-PERPETUAL.100ms", data: `{"change_id":5,"prev_change_id":4}`},
		{name: "deribit notification, params first", proto: deribit.Protocol(),
			frame: `{"params":{"data":{"x":1},"channel":"c"},"method":"subscription","jsonrpc":"2.0"}`,
			kind:  protocol.KindNotification, key: "c", data: `{"x":1}`},
		{name: "deribit response with trailing members", proto: deribit.Protocol(),
			frame: `{"jsonrpc":"2.0","id":3600,"result":["book.BTC-PERPETUAL.100ms"],"usIn":1,"usOut":2,"usDiff":1,"testnet":true}`,
			kind:  protocol.KindResponse, id: 3600, result: `["book.BTC-PERPETUAL.100ms"]`},
		{name: "deribit heartbeat request", proto: deribit.Protocol(),
			frame: `{"jsonrpc":"2.0","method":"heartbeat","params":{"type":"test_request"}}`,
			kind:  protocol.KindHeartbeat, data: `"test_request"`},
		{name: "deribit plain heartbeat", proto: deribit.Protocol(),
			frame: `{"jsonrpc":"2.0","method":"heartbeat","params":{"type":"heartbeat"}}`,
			kind:  protocol.KindEvent, data: `"heartbeat"`},
		{name: "deribit type beside data is not the payload", proto: deribit.Protocol(),
			frame: `{"jsonrpc":"2.0","method":"subscription","params":{"channel":"c","data":{"x":1},"type":"snapshot"}}`,
			kind:  protocol.KindNotification, key: "c", data: `{"x":1}`},
		{name: "deribit error with null id", proto: deribit.Protocol(),
			frame: `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"bad"}}`,
			kind:  protocol.KindResponse, errObj: `{"code":-32600,"message":"bad"}`},

		{name: "ethereum notification", proto: ethereum.Protocol(),
			frame: `{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"0xcd0c3e8af590364c09d0fa6a1210faf5","result":{"number":"0x1b4"}}}`,
			kind:  protocol.KindNotification, key: "0xcd0c3e8af590364c09d0fa6a1210faf5", data: `{"number":"0x1b4"}`},
		{name: "ethereum scalar result notification", proto: ethereum.Protocol(),
			frame: `{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"0x1","result":"0xabc"}}`,
			kind:  protocol.KindNotification, key: "0x1", data: `"0xabc"`},
		{name: "ethereum subscribe response", proto: ethereum.Protocol(),
			frame: `{"jsonrpc":"2.0","id":1,"result":"0xcd0c3e8af590364c09d0fa6a1210faf5"}`,
			kind:  protocol.KindResponse, id: 1, result: `"0xcd0c3e8af590364c09d0fa6a1210faf5"`},
		{name: "ethereum batch", proto: ethereum.Protocol(),
			frame: `[{"jsonrpc":"2.0","id":1,"result":"0x1"}]`, kind: protocol.KindBatch},

		{name: "ethereal book", proto: ethereal.Protocol(),
			frame: `{"e":"L2Book","t":1737043200123,"data":{"s":"BTCUSD","t":2,"pt":1,"a":[],"b":[]}}`,
			kind:  protocol.KindNotification, key: "L2Book:BTCUSD",
			data: `{"e":"L2Book","t":1737043200123,"data":{"s":"BTCUSD","t":2,"pt":1,"a":[],"b":[]}}`},
		{name: "ethereal subaccount stream", proto: ethereal.Protocol(),
			frame: `{"data":{"subaccountId":"abc","qty":1},"e":"OrderFill","t":1}`,
			kind:  protocol.KindNotification, key: "OrderFill:abc",
			data: `{"data":{"subaccountId":"abc","qty":1},"e":"OrderFill","t":1}`},
		{name: "ethereal subaccount stream naming a symbol first", proto: ethereal.Protocol(),
			frame: `{"e":"OrderFill","data":{"symbol":"BTCUSD","subaccountId":"sa-1"}}`,
			kind:  protocol.KindNotification, key: "OrderFill:sa-1",
			data: `{"e":"OrderFill","data":{"symbol":"BTCUSD","subaccountId":"sa-1"}}`},
		{name: "ethereal unknown frame", proto: ethereal.Protocol(), frame: `{"event":"pong"}`, wantErr: protocol.ErrUnrecognized},
		{name: "ethereal truncated frame", proto: ethereal.Protocol(), frame: `{"e":"L2Book","t":1,"data":{"s":"BTCUSD"}`, wantErr: protocol.ErrMalformed},
		{name: "ethereal trailing garbage", proto: ethereal.Protocol(), frame: `{"e":"L2Book","data":{"s":"BTCUSD"}}}`, wantErr: protocol.ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var f protocol.Frame
			err := tt.proto.Classify([]byte(tt.frame), &f)
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.kind, f.Kind)
			assert.Equal(t, tt.id, f.ID)
			assert.Equal(t, tt.id != 0, f.HasID)
			assert.Equal(t, tt.key, string(f.Key))
			if tt.kind != protocol.KindBatch {
				assert.Equal(t, tt.data, string(f.Data))
			}
			assert.Equal(t, tt.result, string(f.Result))
			assert.Equal(t, tt.errObj, string(f.Error))
			assert.Equal(t, tt.event, f.Event)
		})
	}
}

func TestClassifyAllocatesNothing(t *testing.T) {
	frames := map[protocol.Protocol]string{
		thalex.Protocol():   `{"channel_name":"ticker.BTC-PERPETUAL.raw","notification":{"mark_price":68000.5}}`,
		deribit.Protocol():  `{"jsonrpc":"2.0","method":"subscription","params":{"channel":"book.BTC-PERPETUAL.100ms","data":{"change_id":5}}}`,
		ethereum.Protocol(): `{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"0x1","result":{"n":1}}}`,
		ethereal.Protocol(): `{"e":"L2Book","t":1,"data":{"s":"BTCUSD","t":2,"pt":1}}`,
		okx.Protocol():      `{"arg":{"channel":"books","instId":"BTC-USDT"},"action":"update","data":[{"asks":[],"bids":[],"prevSeqId":6,"seqId":7}]}`,
	}
	for p, frame := range frames {
		var f protocol.Frame
		b := []byte(frame)
		allocs := testing.AllocsPerRun(100, func() { _ = p.Classify(b, &f) })
		assert.Zero(t, allocs, p.Name())
	}
}
