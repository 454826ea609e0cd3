package exchangetest_test

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/venue"
)

// The package documentation lists every topic the feeds publish by
// default and every method the servers answer, so a user need not read
// the exchanges' code to find them.
func TestDocListsFeedsAndMethods(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	require.NoError(t, err)
	for _, d := range []string{"thalex", "deribit", "ethereum", "ethereal"} {
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
