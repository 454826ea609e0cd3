package ethereal

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// Two connections' copies of an event are the same from its data on,
// whatever time each was stamped with; an event of other data is not;
// a status frame and a frame of another layout have no copy bytes.
func TestCopyBytes(t *testing.T) {
	d := rules{}
	a, ok := d.CopyBytes([]byte(`{"e":"L2Book","t":1737043200123,"data":{"s":"BTCUSD","t":5,"a":[],"b":[]}}`))
	assert.True(t, ok)
	assert.Equal(t, `"data":{"s":"BTCUSD","t":5,"a":[],"b":[]}}`, string(a))
	b, ok := d.CopyBytes([]byte(`{"e":"L2Book","t":1737043200124,"data":{"s":"BTCUSD","t":5,"a":[],"b":[]}}`))
	assert.True(t, ok)
	assert.Equal(t, a, b, "stamped a millisecond later on another connection: the same copy")
	c, _ := d.CopyBytes([]byte(`{"e":"L2Book","t":1737043200124,"data":{"s":"BTCUSD","t":6,"a":[],"b":[]}}`))
	assert.NotEqual(t, a, c)
	for _, frame := range []string{`{"ok":true}`, `{"e":"L2Book","data":{"t":5}}`, `{"e":"L2Book","t":,"data":{}}`, `{"e":"L\"2","t":1,"data":{}}`, `{"e":"L2Book","t":1}`} {
		_, ok := d.CopyBytes([]byte(frame))
		assert.False(t, ok, frame)
	}
}
