package client_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/ethereum"
)

// A log a node sends again with "removed": true after a reorganisation
// (go-ethereum core/types/log.go) is flagged FlagRetracted; the others
// are not.
func TestRemovedLogIsFlaggedRetracted(t *testing.T) {
	srv := newServer(t, ethereum.Name)
	c := dial(t, srv, ethereum.Protocol())
	ctx := testutil.Context(t)
	const topic = `["logs",{"address":"0x0000000000000000000000000000000000000001"}]`
	sub, err := c.Subscribe(ctx, []string{topic})
	require.NoError(t, err)
	require.NoError(t, srv.WaitSubscribers(ctx, topic, 1))
	srv.Publish(topic, []byte(`{"address":"0x01","blockNumber":"0x2","logIndex":"0x0","removed":false}`))
	srv.Publish(topic, []byte(`{"address":"0x01","blockNumber":"0x2","logIndex":"0x0","removed":true}`))
	assert.Zero(t, receive(t, sub).Flags&client.FlagRetracted)
	m := receive(t, sub)
	assert.NotZero(t, m.Flags&client.FlagRetracted, "%v", m.Flags)
	assert.Equal(t, "retracted", m.Flags.String())
}
