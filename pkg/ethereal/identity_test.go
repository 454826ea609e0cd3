package ethereal

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// An event is known by its data's t and pt; one without t by its
// content.
func TestAppendIdentity(t *testing.T) {
	d := rules{}
	got, ok := d.AppendIdentity(nil, []byte(`{"e":"L2Book","t":9,"data":{"s":"BTCUSD","pt":4,"t":5,"b":[],"a":[]}}`))
	assert.True(t, ok)
	assert.Equal(t, "t5,4", string(got), "the data's times, not the envelope's")
	got, ok = d.AppendIdentity(nil, []byte(`{"e":"Ticker","data":{"s":"BTCUSD","t":7}}`))
	assert.True(t, ok)
	assert.Equal(t, "t7,", string(got))
	_, ok = d.AppendIdentity(nil, []byte(`{"e":"Ticker","data":{"s":"BTCUSD"}}`))
	assert.False(t, ok)
}
