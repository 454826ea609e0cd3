package faultproxy_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/faultproxy"
)

func TestProxyForwardsToUpstream(t *testing.T) {
	p := faultproxy.Start(t, startEcho(t))
	require.True(t, strings.HasPrefix(p.Addr(), "127.0.0.1:"), p.Addr())

	c := dial(t, p.Addr())
	roundTrip(t, c, "hello")
	roundTrip(t, c, "again")
}

func TestURLRewritesHost(t *testing.T) {
	p := faultproxy.Start(t, startEcho(t))
	require.Equal(t, "ws://"+p.Addr()+"/v1/stream?topic=a#f",
		p.URL("ws://127.0.0.1:1234/v1/stream?topic=a#f"))
	require.Equal(t, "wss://"+p.Addr()+"/", p.URL("wss://localhost:99/"))
}
