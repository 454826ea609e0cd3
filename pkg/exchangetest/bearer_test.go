package exchangetest_test

import (
	"net/http"
	"testing"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/pkg/ethereum"
	"github.com/wsfan/wsfan/pkg/exchangetest"
)

func TestBearerTokenGuardsTheHandshake(t *testing.T) {
	srv := newServer(t, ethereum.Name, exchangetest.WithBearerToken("t0ken"))
	for _, h := range []http.Header{nil, {"Authorization": {"Bearer wrong"}}, {"Authorization": {"t0ken"}}} {
		ws, resp, err := websocket.DefaultDialer.Dial(srv.URL(), h)
		require.Error(t, err, "header %v", h)
		assert.Nil(t, ws)
		assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
		_ = resp.Body.Close()
	}
	ws, resp, err := websocket.DefaultDialer.Dial(srv.URL(), http.Header{"Authorization": {"Bearer t0ken"}})
	require.NoError(t, err)
	_ = resp.Body.Close()
	_ = ws.Close()
}
