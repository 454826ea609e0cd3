package natsbridge

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// A candidate needs the dialect its leader parses the group's topics
// with (a client.Holder takes them parsed): Join refuses WithUpstream
// without WithProtocol, before it touches NATS.
func TestCandidateNeedsAProtocol(t *testing.T) {
	dial := WithUpstream(func(context.Context) (client.Holder, error) { return nil, nil })
	c := defaultConfig()
	dial(&c)
	require.ErrorContains(t, c.validate("g"), "WithUpstream needs WithProtocol")

	c = defaultConfig()
	dial(&c)
	WithProtocol(thalex.Protocol())(&c)
	require.NoError(t, c.validate("g"))

	c = defaultConfig() // a member that only consumes needs none
	require.NoError(t, c.validate("g"))
}
