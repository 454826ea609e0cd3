package main

import (
	"net/http"
	"testing"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// A page on another origin opens a WebSocket only when -allowed-origins
// (or WSFAN_ALLOWED_ORIGINS) lists it; programs, which send no Origin,
// are always let in.
func TestAllowedOrigins(t *testing.T) {
	up := exchangetest.NewServer(thalex.Name)
	defer up.Close()
	for _, tc := range []struct {
		env     map[string]string
		args    []string
		allowed []string
		refused []string
	}{
		{refused: []string{"http://localhost:3000"}},
		{env: map[string]string{"WSFAN_ALLOWED_ORIGINS": "http://localhost:3000,http://127.0.0.1:8080"},
			allowed: []string{"http://localhost:3000", "http://127.0.0.1:8080"}, refused: []string{"http://evil.example"}},
		{env: map[string]string{"WSFAN_ALLOWED_ORIGINS": "http://localhost:3000"}, args: []string{"-allowed-origins", "http://localhost:4000"},
			allowed: []string{"http://localhost:4000"}, refused: []string{"http://localhost:3000"}},
		{args: []string{"-allowed-origins", "*"}, allowed: []string{"http://anything.example"}},
	} {
		env := map[string]string{"WSFAN_UPSTREAM": up.URL()}
		for k, v := range tc.env {
			env[k] = v
		}
		r := startSidecar(t, env, nil, tc.args...)
		dial := func(origin string) int {
			h := http.Header{}
			if origin != "" {
				h.Set("Origin", origin)
			}
			ws, resp, err := websocket.DefaultDialer.Dial("ws://"+r.addr+"/ws", h)
			if err == nil {
				_ = ws.Close()
			}
			require.NotNil(t, resp, "dial with Origin %q: %v", origin, err)
			return resp.StatusCode
		}
		assert.Equal(t, http.StatusSwitchingProtocols, dial(""), "no Origin")
		for _, o := range tc.allowed {
			assert.Equal(t, http.StatusSwitchingProtocols, dial(o), "%v %v: %s", tc.env, tc.args, o)
		}
		for _, o := range tc.refused {
			assert.Equal(t, http.StatusForbidden, dial(o), "%v %v: %s", tc.env, tc.args, o)
		}
		r.stop(t)
	}
}
