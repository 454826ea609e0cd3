package deribit_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/wsfan/wsfan/pkg/exchangetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// grants lists the grant_type of every public/auth the server received.
func grants(t *testing.T, srv *exchangetest.Server) []string {
	t.Helper()
	var out []string
	for _, r := range srv.Received() {
		var req struct {
			Method string
			Params struct {
				GrantType string `json:"grant_type"`
			}
		}
		require.NoError(t, json.Unmarshal(r.Data, &req))
		if req.Method == "public/auth" {
			out = append(out, req.Params.GrantType)
		}
	}
	return out
}
