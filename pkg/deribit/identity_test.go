package deribit

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// A notification's identity comes from Deribit's documented fields.
func TestAppendIdentity(t *testing.T) {
	for _, tc := range []struct{ data, want string }{
		{`{"type":"change","timestamp":1,"prev_change_id":4,"instrument_name":"BTC-PERPETUAL","change_id":5,"bids":[],"asks":[]}`, "c5"},
		{`[{"trade_seq":9,"trade_id":"ETH-1","price":1},{"trade_id":"ETH-2","price":2}]`, `x"ETH-1","ETH-2",`},
		{`{"timestamp":1700000000123,"instrument_name":"BTC-PERPETUAL","mark_price":1}`, "t1700000000123"},
	} {
		got, ok := Protocol().Venue().Messages.AppendIdentity(nil, []byte(tc.data))
		assert.True(t, ok, tc.data)
		assert.Equal(t, tc.want, string(got))
	}
	_, ok := Protocol().Venue().Messages.AppendIdentity(nil, []byte(`{"mark_price":1}`))
	assert.False(t, ok, "no documented field: told apart by content")
	_, ok = Protocol().Venue().Messages.AppendIdentity(nil, []byte(`[{"price":1}]`))
	assert.False(t, ok, "a trade without its id")
}
