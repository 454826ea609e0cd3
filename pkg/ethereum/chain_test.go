package ethereum_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/pkg/ethereum"
)

// hash32 is a block hash made of a name: "0x" and 64 hex digits.
func hash32(name string) string { return "0x" + strings.Repeat("0", 64-len(name)) + name }

func head(n int, hash, parent string) []byte {
	return fmt.Appendf(nil, `{"parentHash":%q,"number":"0x%x","hash":%q,"miner":"0x00"}`, hash32(parent), n, hash32(hash))
}

// Chain reads newHeads payloads: an extension is no reorg, a head whose
// parent is an older head replaces the heads after it, and a payload
// without the fields is an error.
func TestChain(t *testing.T) {
	c := ethereum.NewChain(8)
	for _, h := range [][]byte{head(1, "a1", "a0"), head(2, "a2", "a1"), head(3, "a3", "a2")} {
		r, err := c.Apply(h)
		require.NoError(t, err)
		assert.Nil(t, r)
	}
	r, err := c.Apply(head(2, "b2", "a1"))
	require.NoError(t, err)
	require.NotNil(t, r)
	assert.Equal(t, &ethereum.Reorg{Depth: 2, Replaced: []ethereum.Block{{Number: 2, Hash: hash32("a2")}, {Number: 3, Hash: hash32("a3")}}}, r)
	canonical, known := c.Canonical(2, hash32("b2"))
	assert.True(t, canonical && known)
	_, err = c.Apply([]byte(`{"number":"0x4"}`))
	assert.Error(t, err)
}
