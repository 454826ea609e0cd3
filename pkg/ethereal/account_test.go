package ethereal_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/ethereal"
	"github.com/wsfan/wsfan/pkg/exchangetest"
)

// An account stream routes by the subaccount id its events carry: in
// data.sid, or in the sid of each item of data.d (as the public SDK's
// schemas put it); a subscription to another subaccount gets nothing.
func TestAccountStreamRoutesBySid(t *testing.T) {
	const mine, other = "a9a3b9b0-7f5e-4b55-8e2f-1c7e0d1e2f3a", "00000000-0000-0000-0000-000000000001"
	srv := exchangetest.NewServer(ethereal.Name)
	t.Cleanup(srv.Close)
	ctx := testutil.Context(t)
	c, err := client.Dial(ctx, srv.URL(), client.WithProtocol(ethereal.Protocol()))
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	positions, err := c.Subscribe(ctx, []string{"PositionUpdate:" + mine})
	require.NoError(t, err)
	fills, err := c.Subscribe(ctx, []string{"OrderFill:" + mine})
	require.NoError(t, err)
	require.NoError(t, srv.WaitSubscribers(ctx, "OrderFill:"+mine, 1))

	srv.PublishRaw([]byte(`{"e":"PositionUpdate","t":1,"data":{"sid":"` + other + `","size":"1"}}`))
	srv.PublishRaw([]byte(`{"e":"PositionUpdate","t":2,"data":{"sid":"` + mine + `","size":"2"}}`))
	srv.PublishRaw([]byte(`{"e":"OrderFill","t":3,"data":{"d":[{"sid":"` + mine + `","id":"f1"},{"sid":"` + mine + `","id":"f2"}]}}`))
	next := func(sub *client.Subscription) client.Message {
		t.Helper()
		select {
		case m := <-sub.C():
			return m
		case <-ctx.Done():
			t.Fatal("no event")
			return client.Message{}
		}
	}
	assert.Contains(t, string(next(positions).Data), `"size":"2"`, "the other subaccount's event is not mine")
	assert.Contains(t, string(next(fills).Data), `"id":"f1"`)
}
