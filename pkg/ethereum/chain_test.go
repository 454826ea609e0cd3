package ethereum_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/pkg/ethereum"
)

func head(n int, hash, parent string) []byte {
	return fmt.Appendf(nil, `{"parentHash":%q,"number":"0x%x","hash":%q,"miner":"0x00"}`, parent, n, hash)
}

// Chain reads newHeads payloads: an extension is no reorg, a head whose
// parent is an older head replaces the heads after it, and a payload
// without the fields is an error.
func TestChain(t *testing.T) {
	c := ethereum.NewChain(8)
	for _, h := range [][]byte{head(1, "0xa1", "0xa0"), head(2, "0xa2", "0xa1"), head(3, "0xa3", "0xa2")} {
		r, err := c.Apply(h)
		require.NoError(t, err)
		assert.Nil(t, r)
	}
	r, err := c.Apply(head(2, "0xb2", "0xa1"))
	require.NoError(t, err)
	require.NotNil(t, r)
	assert.Equal(t, &ethereum.Reorg{Depth: 2, Replaced: []ethereum.Block{{Number: 2, Hash: "0xa2"}, {Number: 3, Hash: "0xa3"}}}, r)
	canonical, known := c.Canonical(2, "0xb2")
	assert.True(t, canonical && known)
	_, err = c.Apply([]byte(`{"number":"0x4"}`))
	assert.Error(t, err)
}
