package okx

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// A trade push is known by its tradeIds, a book push by its prevSeqId and
// seqId, a ticker by its content.
func TestAppendIdentity(t *testing.T) {
	d := rules{}
	got, ok := d.AppendIdentity(nil, []byte(`[{"instId":"BTC-USDT","tradeId":"130639474","seqId":1234},{"tradeId":"130639475","seqId":1234}]`))
	assert.True(t, ok)
	assert.Equal(t, `t"130639474"t"130639475"`, string(got), "two trades of one seqId told apart")
	got, ok = d.AppendIdentity(nil, []byte(`[{"asks":[],"bids":[],"ts":"1","checksum":0,"prevSeqId":15,"seqId":15}]`))
	assert.True(t, ok)
	assert.Equal(t, "s15,15", string(got), "the quiet book's update, not the change 10 → 15")
	got, ok = d.AppendIdentity(nil, []byte(`[{"asks":[],"bids":[],"ts":"1","seqId":363996337}]`))
	assert.True(t, ok)
	assert.Equal(t, "s,363996337", string(got), "bbo-tbt: no prevSeqId")
	_, ok = d.AppendIdentity([]byte("x"), []byte(`[{"instId":"BTC-USDT","last":"9999.99","ts":"1597026383085"}]`))
	assert.False(t, ok)
}
