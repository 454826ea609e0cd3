package sidecar

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

// Which Host headers each listen address and allowlist serve.
func TestHostAllowlistAllows(t *testing.T) {
	for _, tc := range []struct {
		listen  string
		allowed []string
		served  []string
		refused []string
	}{
		{listen: "127.0.0.1:8765",
			served:  []string{"localhost", "localhost:8765", "LocalHost.", "127.0.0.1", "127.0.0.1:1", "127.200.0.9:8765", "[::1]:8765", "::1", "[::ffff:127.0.0.1]:1"},
			refused: []string{"", "rebind.example", "rebind.example:8765", "localhost.rebind.example", "10.0.0.1", "[::2]:8765", "0.0.0.0"}},
		{listen: "10.1.2.3:8765",
			served:  []string{"10.1.2.3:8765", "localhost"},
			refused: []string{"10.1.2.4", "sidecar.example"}},
		{listen: "sidecar.internal:8765",
			served:  []string{"sidecar.internal:8765", "SIDECAR.INTERNAL"},
			refused: []string{"other.internal"}},
		// All interfaces: every address is one of its names, no name is.
		{listen: "0.0.0.0:8765",
			served:  []string{"10.1.2.3:8765", "192.168.1.9", "[2001:db8::1]:8765", "localhost"},
			refused: []string{"sidecar.example"}},
		{listen: ":8765",
			served:  []string{"10.1.2.3"},
			refused: []string{"rebind.example"}},
		{listen: "127.0.0.1:8765", allowed: []string{"10.0.0.0/8", "192.168.1.9", "[2001:db8::1]", "*.corp.example", "sidecar.example"},
			served:  []string{"10.200.1.1:1", "192.168.1.9", "[2001:db8::1]:8765", "a.corp.example", "sidecar.example:80"},
			refused: []string{"192.168.1.10", "corp.example", "xcorp.example", "sidecar.example.evil"}},
		{listen: "127.0.0.1:8765", allowed: []string{"*"}, served: []string{"", "anything.example"}},
	} {
		h, err := newHostAllowlist(tc.allowed, tc.listen, new(atomic.Uint64), zap.NewNop())
		require.NoError(t, err)
		for _, host := range tc.served {
			assert.True(t, h.allows(host), "listen %s, allowed %v: %q", tc.listen, tc.allowed, host)
		}
		for _, host := range tc.refused {
			assert.False(t, h.allows(host), "listen %s, allowed %v: %q", tc.listen, tc.allowed, host)
		}
	}
}

// Each refused host is logged once, up to mostLogged hosts, then
// one line says the rest are only counted; every refusal is counted.
func TestHostRefusalsLoggedOncePerHost(t *testing.T) {
	core, logs := observer.New(zap.WarnLevel)
	var refused atomic.Uint64
	h, err := newHostAllowlist(nil, "127.0.0.1:8765", &refused, zap.New(core))
	require.NoError(t, err)
	next := http.HandlerFunc(func(http.ResponseWriter, *http.Request) { t.Error("a refused request was served") })
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.serve(next, w, r) })
	send := func(host string) {
		r := httptest.NewRequest(http.MethodGet, "/v1/status", nil)
		r.Host = host
		w := httptest.NewRecorder()
		handler.ServeHTTP(w, r)
		assert.Equal(t, http.StatusForbidden, w.Code)
	}
	for range 3 {
		send("rebind.example:8765")
	}
	assert.Equal(t, 1, logs.Len())
	for i := range mostLogged + 10 {
		send(fmt.Sprintf("h%d.example", i))
	}
	assert.Equal(t, mostLogged+1, logs.Len(), "one line a host up to the bound, then one")
	assert.EqualValues(t, 3+mostLogged+10, refused.Load())
}
