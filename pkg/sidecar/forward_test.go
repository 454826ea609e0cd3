package sidecar_test

import (
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/ethereum"
	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/sidecar"
)

// A read-only call (eth_blockNumber) on its way when the upstream link
// goes silent reaches the upstream once: the sidecar answers it with an
// error saying the connection was lost and the call was not retried, as
// soon as the connection is found dead, and the program's connection
// stays open for its next call. (The upstream client made it again on
// the next connection, long after a program such as ethclient had given
// up on it.)
func TestForwardedCallIsNotMadeAgain(t *testing.T) {
	var calls atomic.Int32
	r := newRig(t, ethereum.Name, func(c *sidecar.Config) {
		// A pong timeout a loaded machine (race detector, 2 cores) does not miss.
		c.UpstreamPing, c.UpstreamPingTimeout = 200*time.Millisecond, 3*time.Second
	})
	r.up.Handle("eth_blockNumber", func(json.RawMessage) (any, *protocol.Error) {
		if calls.Add(1) == 1 {
			r.up.SetSilent(true) // the answer, and every pong, is lost
		}
		return "0x10", nil
	})
	ws := r.dial(t)
	testutil.Send(t, ws, `{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}`)
	var answer struct {
		ID    int `json:"id"`
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	require.NoError(t, json.Unmarshal([]byte(testutil.Recv(t, ws)), &answer))
	require.NotNil(t, answer.Error, "the call fails")
	assert.Equal(t, 1, answer.ID)
	assert.Contains(t, answer.Error.Message, "the upstream connection was lost and the call was not retried")
	assert.Equal(t, 1, r.up.CountReceived("eth_blockNumber"), "the call reached the upstream once")

	r.up.SetSilent(false)
	waitFor(t, "upstream connected again", r.sc.Ready)
	testutil.Send(t, ws, `{"jsonrpc":"2.0","id":2,"method":"eth_blockNumber","params":[]}`)
	require.JSONEq(t, `{"jsonrpc":"2.0","id":2,"result":"0x10"}`, testutil.Recv(t, ws), "the program's connection is open")
	assert.Equal(t, 2, r.up.CountReceived("eth_blockNumber"))
}
