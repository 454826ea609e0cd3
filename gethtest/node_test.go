package gethtest

import (
	"context"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/eth/ethconfig"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/ethclient/simulated"
	"github.com/ethereum/go-ethereum/node"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/wsfan/wsfan/internal/sidecartest"
	"github.com/wsfan/wsfan/pkg/ethereum"
	"github.com/wsfan/wsfan/pkg/sidecar"
)

// freePort returns a loopback port nobody listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startNode starts go-ethereum's simulated chain with its eth namespace
// served over WebSocket on loopback, and returns it with its URL.
func startNode(t *testing.T) (*simulated.Backend, string) {
	t.Helper()
	return startNodeWith(t, types.GenesisAlloc{}, nil)
}

// startNodeWith is startNode with a genesis allocation and a tune of the
// node's configuration (nil for none).
func startNodeWith(t *testing.T, alloc types.GenesisAlloc, tune func(*node.Config)) (*simulated.Backend, string) {
	t.Helper()
	port := freePort(t)
	backend := simulated.NewBackend(alloc, func(nc *node.Config, _ *ethconfig.Config) {
		nc.WSHost, nc.WSPort, nc.WSModules = "127.0.0.1", port, []string{"eth"}
		if tune != nil {
			tune(nc)
		}
	})
	t.Cleanup(func() { _ = backend.Close() })
	return backend, "ws://127.0.0.1:" + strconv.Itoa(port)
}

// startSidecar starts a sidecar in front of upstream (an Ethereum node)
// and returns its local WebSocket URL.
func startSidecar(t *testing.T, upstream string) string {
	t.Helper()
	s := sidecartest.Serve(t, sidecar.Config{Upstream: upstream, Protocol: ethereum.Name, Logger: zap.NewNop()})
	return "ws://" + s.Addr + "/ws"
}

// startFastSidecar is a sidecar in front of upstream that notices a dead
// link and comes back within a second; it returns the sidecar and its
// local WebSocket URL.
func startFastSidecar(t *testing.T, upstream string) (*sidecartest.Served, string) {
	t.Helper()
	s := sidecartest.Serve(t, sidecar.Config{Upstream: upstream, Protocol: ethereum.Name, Logger: zap.NewNop(),
		UpstreamPing: 100 * time.Millisecond, UpstreamPingTimeout: 300 * time.Millisecond, UpstreamReconnectMax: 100 * time.Millisecond})
	return s, "ws://" + s.Addr + "/ws"
}

// dialClient connects go-ethereum's ethclient to url.
func dialClient(t *testing.T, url string) *ethclient.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := ethclient.DialContext(ctx, url)
	require.NoError(t, err)
	t.Cleanup(c.Close)
	return c
}
