package exchangetest_test

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	_ "github.com/wsfan/wsfan/pkg/exchanges"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/venue"
)

// The package documentation lists every topic the feeds publish by
// default and every method the servers answer, of every registered
// exchange, so a user need not read the exchanges' code to find them.
func TestDocListsFeedsAndMethods(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	require.NoError(t, err)
	for _, d := range protocol.Names() {
		assert.Regexp(t, `(?m)^//\t`+d+` +\S`, string(doc), "%s has a row in the table", d)
		topics := exchangetest.FeedTopicsOf(exchangetest.Dialect(d), exchangetest.FeedOptions{})
		require.NotEmpty(t, topics, "%s is registered in this test binary", d)
		for _, topic := range topics {
			if strings.Contains(topic, "ETH") { // listed as "(and ETH…)"
				continue
			}
			assert.Contains(t, string(doc), topic, "%s feed topic", d)
		}
		for method := range venue.ByName(d).Methods {
			assert.Contains(t, string(doc), method, "%s method", d)
		}
	}
}
