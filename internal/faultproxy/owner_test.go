package faultproxy

import (
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The cleanup's wait is only as good as the labels: the goroutines that
// serve a connection must carry the proxy's label, and be gone once the
// proxy stopped.
func TestOwnerTracksConnectionGoroutines(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	p := Start(t, ln.Addr().String())

	idle, _ := p.owner.running()
	require.Positive(t, idle, "accept loop")

	c, err := net.DialTimeout("tcp", p.Addr(), 10*time.Second)
	require.NoError(t, err)
	defer c.Close()
	up, err := ln.Accept()
	require.NoError(t, err)
	defer up.Close()

	// Two links (read, noop stub, write each) on top of the accept loop.
	require.Eventually(t, func() bool {
		n, _ := p.owner.running()
		return n >= idle+6
	}, 10*time.Second, 5*time.Millisecond)

	p.Down()
	require.NoError(t, p.owner.wait(10*time.Second))
}
