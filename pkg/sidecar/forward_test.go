package sidecar_test

import (
	"encoding/json"
	"fmt"
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
	// The program's connection is open: its next call is answered once
	// the upstream is back (Ready may still say so of the dead
	// connection for a moment: a call then fails, not retried, and the
	// program asks again).
	answered := false
	for id := 2; !answered && id < 200; id++ {
		waitFor(t, "upstream connected again", r.sc.Ready)
		testutil.Send(t, ws, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"eth_blockNumber","params":[]}`, id))
		var resp struct {
			Result string `json:"result"`
		}
		require.NoError(t, json.Unmarshal([]byte(testutil.Recv(t, ws)), &resp))
		if answered = resp.Result == "0x10"; !answered {
			time.Sleep(50 * time.Millisecond)
		}
	}
	require.True(t, answered, "the program's connection is open")
	assert.Equal(t, 2, r.up.CountReceived("eth_blockNumber"), "a failed call never reached the upstream")
}
