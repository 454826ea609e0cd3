package sidecar_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/sidecar"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// endpoints are every path a sidecar serves, and a topic for the streams.
var endpoints = []string{"/", "/ws", "/v1/stream?topic=ticker.BTC-PERPETUAL.raw", "/v1/status", "/v1/status/stream", "/metrics", "/healthz", "/readyz"}

// request sends a GET for path to the sidecar at addr, addressed to host
// with origin (none when empty), as a WebSocket upgrade for /ws, and
// returns the status code and the start of the body. A stream that is
// served is cut after its headers.
func request(t *testing.T, scheme, addr, host, origin, path string) (int, string) {
	t.Helper()
	if path == "/ws" {
		h := http.Header{"Host": {host}}
		if origin != "" {
			h.Set("Origin", origin)
		}
		ws, resp, err := websocket.DefaultDialer.Dial("ws://"+addr+path, h)
		if err == nil {
			_ = ws.Close()
		}
		require.NotNil(t, resp, "dial %s as %s: %v", addr, host, err)
		defer func() { _ = resp.Body.Close() }()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return resp.StatusCode, string(b)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, scheme+"://"+addr+path, nil)
	require.NoError(t, err)
	req.Host = host
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer func() { _ = resp.Body.Close() }()
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return resp.StatusCode, ""
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return resp.StatusCode, string(b)
}

// servedOK is the status a served endpoint answers.
func servedOK(path string) int {
	if path == "/ws" {
		return http.StatusSwitchingProtocols
	}
	return http.StatusOK
}

// A page whose domain was re-pointed at 127.0.0.1 (DNS rebinding) sends
// its own domain as Host and as Origin, which agree: every endpoint of a
// loopback sidecar refuses it, with and without AllowedOrigins listing
// that origin, with a body naming the host and the setting, logged once.
// The loopback names are served, and a listed host is.
func TestForeignHostRefusedOnEveryEndpoint(t *testing.T) {
	const rebound = "rebind.example"
	for _, tc := range []struct {
		name    string
		origins []string
	}{
		{name: "no allowed origins"},
		{name: "its origin allowed", origins: []string{"http://" + rebound}},
		{name: "any origin allowed", origins: []string{"*"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			core, logs := observer.New(zap.WarnLevel)
			r := newRig(t, thalex.Name, func(c *sidecar.Config) {
				c.AllowedOrigins = tc.origins
				c.Logger = zap.New(core)
			})
			addr := strings.TrimPrefix(r.url, "http://")
			_, port, _ := net.SplitHostPort(addr)
			host := rebound + ":" + port
			for _, path := range endpoints {
				code, body := request(t, "http", addr, host, "http://"+host, path)
				assert.Equal(t, http.StatusForbidden, code, "%s as %s", path, host)
				assert.Contains(t, body, `"`+rebound+`"`, "%s: the body names the host", path)
				assert.Contains(t, body, "-allowed-hosts", "%s: the body names the setting", path)
			}
			refusals := logs.FilterMessageSnippet("not allowed").FilterField(zap.String("host", rebound)).Len()
			assert.Equal(t, 1, refusals, "logged once per host: %v", logs.All())
			_, metrics := httpGet(t, r.url+"/metrics")
			assert.Contains(t, metrics, fmt.Sprintf("wsfan_sidecar_host_refusals_total %d", len(endpoints)))

			for _, name := range []string{"localhost", "127.0.0.1", "127.1.2.3", "LOCALHOST."} {
				for _, path := range endpoints {
					code, body := request(t, "http", addr, name+":"+port, "", path)
					assert.Equal(t, servedOK(path), code, "%s as %s: %s", path, name, body)
				}
			}
		})
	}
}

// AllowedHosts serves the names listed (exact, *.domain, networks) and
// nothing else; "*" serves every host.
func TestAllowedHosts(t *testing.T) {
	for _, tc := range []struct {
		allowed []string
		served  []string
		refused []string
	}{
		{allowed: []string{"sidecar.example"}, served: []string{"sidecar.example", "SIDECAR.example."}, refused: []string{"evil.example", "x.sidecar.example"}},
		{allowed: []string{"*.corp.example"}, served: []string{"a.corp.example", "b.a.corp.example"}, refused: []string{"corp.example", "acorp.example"}},
		{allowed: []string{"*"}, served: []string{"anything.example", "rebind.example"}},
	} {
		r := newRig(t, thalex.Name, func(c *sidecar.Config) { c.AllowedHosts = tc.allowed })
		addr := strings.TrimPrefix(r.url, "http://")
		for _, h := range tc.served {
			for _, path := range endpoints {
				code, body := request(t, "http", addr, h, "http://"+h, path)
				assert.Equal(t, servedOK(path), code, "%v: %s as %s: %s", tc.allowed, path, h, body)
			}
		}
		for _, h := range tc.refused {
			code, _ := request(t, "http", addr, h, "", "/v1/status")
			assert.Equal(t, http.StatusForbidden, code, "%v: %s", tc.allowed, h)
		}
	}
}

// With a token, an allowed host still needs it, and a foreign host is
// refused even with it.
func TestHostCheckAndTokenBoth(t *testing.T) {
	r := newRig(t, thalex.Name, func(c *sidecar.Config) { c.Token = "s3cret" })
	addr := strings.TrimPrefix(r.url, "http://")
	code, _ := request(t, "http", addr, "localhost", "", "/v1/status")
	assert.Equal(t, http.StatusUnauthorized, code)
	code, _ = request(t, "http", addr, "localhost", "", "/v1/status?token=s3cret")
	assert.Equal(t, http.StatusOK, code)
	code, _ = request(t, "http", addr, "rebind.example", "", "/v1/status?token=s3cret")
	assert.Equal(t, http.StatusForbidden, code)
}

// A sidecar on IPv6 loopback serves [::1] and localhost, and refuses a
// foreign host.
func TestIPv6Loopback(t *testing.T) {
	ln, err := net.Listen("tcp", "[::1]:0")
	if err != nil {
		t.Skipf("no IPv6 loopback on this machine: %v", err)
	}
	up := exchangetest.NewServer(thalex.Name)
	t.Cleanup(up.Close)
	srv, err := sidecar.New(sidecar.Config{Upstream: up.URL(), Protocol: thalex.Name, Listen: ln.Addr().String(), DrainTimeout: time.Second})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Serve: %v", err)
		}
	})
	addr := ln.Addr().String() // [::1]:PORT
	_, port, _ := net.SplitHostPort(addr)
	waitFor(t, "upstream connected", srv.Ready)
	for _, host := range []string{addr, "localhost:" + port, "[::1]"} {
		for _, path := range endpoints {
			code, body := request(t, "http", addr, host, "", path)
			assert.Equal(t, servedOK(path), code, "%s as %s: %s", path, host, body)
		}
	}
	code, _ := request(t, "http", addr, "rebind.example:"+port, "", "/v1/status")
	assert.Equal(t, http.StatusForbidden, code)
}

// An entry of AllowedHosts that is not a host is refused by New, named.
func TestAllowedHostsInvalid(t *testing.T) {
	for _, bad := range []string{"sidecar.example:8765", "http://sidecar.example", "*.", "a b"} {
		_, err := sidecar.New(sidecar.Config{Upstream: "ws://127.0.0.1:1/ws", Protocol: thalex.Name, AllowedHosts: []string{bad}})
		require.Error(t, err, bad)
		assert.Contains(t, err.Error(), fmt.Sprintf("%q", bad))
	}
}
