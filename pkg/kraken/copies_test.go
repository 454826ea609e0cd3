package kraken

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// A market-data message is its own copy bytes; status (the connection's
// id), heartbeat, the private channels (numbered on each connection) and
// answers have none.
func TestCopyBytes(t *testing.T) {
	d := messages{}
	frame := `{"channel":"trade","type":"update","data":[{"symbol":"MATIC/USD","side":"sell","price":0.5117,"qty":40.0,"ord_type":"market","trade_id":4665906,"timestamp":"2023-09-25T07:49:37.708706Z"}]}`
	got, ok := d.CopyBytes([]byte(frame))
	assert.True(t, ok)
	assert.Equal(t, frame, string(got))
	for _, frame := range []string{
		`{"channel":"status","data":[{"api_version":"v2","connection_id":12393906104898154338,"system":"online","version":"2.0.4"}],"type":"update"}`,
		`{"channel":"heartbeat"}`,
		`{"channel":"executions","type":"update","data":[],"sequence":2}`,
		`{"channel":"balances","type":"snapshot","data":[],"sequence":1}`,
		`{"method":"pong","req_id":101}`,
		`{"channel":"book"}`,
	} {
		_, ok := d.CopyBytes([]byte(frame))
		assert.False(t, ok, frame)
	}
}
