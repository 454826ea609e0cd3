package ethereum

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// A head is its hash; a log its block hash, index and removed flag,
// whatever order and spacing the node writes them in.
func TestAppendIdentity(t *testing.T) {
	d := dialect{}
	head, ok := d.AppendIdentity(nil, []byte(`{"parentHash":"0x01","number":"0x10","hash":"0xab"}`))
	assert.True(t, ok)
	assert.Equal(t, `h"0xab"`, string(head))
	spaced, _ := d.AppendIdentity(nil, []byte(`{ "parentHash": "0x01", "hash": "0xab" }`))
	assert.Equal(t, string(head), string(spaced), "another node's spelling")
	log, ok := d.AppendIdentity(nil, []byte(`{"logIndex":"0x2","transactionHash":"0x9","blockHash":"0xcd","removed":false}`))
	assert.True(t, ok)
	same, _ := d.AppendIdentity(nil, []byte(`{ "blockHash": "0xcd", "removed": false, "logIndex": "0x2" }`))
	assert.Equal(t, string(log), string(same), "another node's spelling")
	removed, _ := d.AppendIdentity(nil, []byte(`{"logIndex":"0x2","blockHash":"0xcd","removed":true}`))
	assert.NotEqual(t, string(log), string(removed), "a log taken back is a message of its own")
	_, ok = d.AppendIdentity(nil, []byte(`"0xfeed"`))
	assert.False(t, ok, "a pending transaction's hash is its content")
}
