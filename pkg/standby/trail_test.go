package standby

import (
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/testutil"
)

// A trailing leg's socket that pauses before each read of its drained
// socket still reads every byte, though each write arrives while the
// reader waits in its read: the low-water mark, raised while it pauses (a
// few small writes never reach it), is lowered again before the read,
// which would otherwise wait for 32 KiB.
func TestTrailConnReadsWhatArrivesWhileItWaits(t *testing.T) {
	nc, server := testutil.TCPPair(t)

	var asked atomic.Int64
	tc := &trailConn{Conn: nc, pause: func() time.Duration { asked.Add(1); return time.Microsecond }}
	var err error
	tc.raw, err = nc.(syscall.Conn).SyscallConn()
	require.NoError(t, err)
	defer tc.Close()

	got := make(chan string)
	go func() {
		buf := make([]byte, 64<<10)
		for {
			n, err := tc.Read(buf)
			if err != nil {
				close(got)
				return
			}
			got <- string(buf[:n])
		}
	}()
	for i, msg := range []string{"a", "bb", "ccc"} {
		if i > 0 { // the reader drained the last write: it asks before its next read
			require.Eventually(t, func() bool { return asked.Load() >= int64(i) }, 5*time.Second, time.Millisecond)
		}
		time.Sleep(10 * time.Millisecond) // the reader waits in its read meanwhile
		_, err := server.Write([]byte(msg))
		require.NoError(t, err)
		select {
		case s := <-got:
			assert.Equal(t, msg, s)
		case <-time.After(5 * time.Second):
			t.Fatalf("%q written was not read", msg)
		}
	}
	assert.GreaterOrEqual(t, asked.Load(), int64(2), "the pause is asked before each read of the drained socket")
}
