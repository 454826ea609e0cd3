package batchconn

import (
	"io"
	"net"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// countingConn counts Write calls on the wire side.
type countingConn struct {
	net.Conn
	writes int
}

func (c *countingConn) Write(p []byte) (int, error) {
	c.writes++
	return c.Conn.Write(p)
}

func TestCorkedWritesGoOutInOneWrite(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	wire := &countingConn{Conn: a}
	c := New(wire)

	got := make(chan []byte)
	go func() {
		buf := make([]byte, 12)
		_, _ = io.ReadFull(b, buf)
		got <- buf
	}()
	c.Cork()
	for _, s := range []string{"one ", "two ", "three"} {
		n, err := c.Write([]byte(s))
		require.NoError(t, err)
		assert.Equal(t, len(s), n)
	}
	assert.Zero(t, wire.writes, "nothing is written while corked")
	go func() { _ = c.Flush() }()
	assert.Equal(t, "one two thre", string(<-got))

	go func() { _, _ = io.ReadAll(b) }()
	_, err := c.Write([]byte("x"))
	require.NoError(t, err)
	assert.Equal(t, 2, wire.writes, "one write for the batch, one for the uncorked write")
}
