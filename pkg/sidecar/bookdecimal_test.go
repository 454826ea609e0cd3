package sidecar_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/pkg/okx"
)

// /v1/book serves an OKX book priced in ticks below 1e-8, with sizes
// beyond 10^9, exactly as OKX wrote it: the books5 frame of
// gocryptotrader's OKX test (exchanges/okx/okx_test.go), shortened to
// two levels a side. A book of 8 fractional digits refused it, never
// turned valid, and the request timed out.
func TestBookOverHTTPServesFineTicksExactly(t *testing.T) {
	const topic = "books5:OKB-USDT"
	const frame = `{"arg":{"channel":"books5","instId":"OKB-USDT"},"data":[{"asks":[["0.0000007465","2290075956","0","4"],["0.0000007466","1747284705","0","4"]],"bids":[["0.0000007464","15693119","0","1"],["0.000000746","6021641435","0","7"]],"instId":"OKB-USDT","ts":"1695864901807","seqId":4826378794}]}`
	r := newRig(t, okx.Name, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	type answer struct {
		code int
		body []byte
		err  error
	}
	answers := make(chan answer, 1)
	go func() { // the request waits for a valid book, so the frame comes after it
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.url+"/v1/book?topic="+url.QueryEscape(topic), nil)
		if err != nil {
			answers <- answer{err: err}
			return
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			answers <- answer{err: err}
			return
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		answers <- answer{code: resp.StatusCode, body: body, err: err}
	}()
	require.NoError(t, r.up.WaitSubscribers(ctx, topic, 1))
	require.Equal(t, 1, r.up.PublishRaw([]byte(frame)))

	a := <-answers
	require.NoError(t, a.err)
	require.Equal(t, http.StatusOK, a.code, "%s", a.body)
	var got struct {
		Valid       bool
		Seq         int64
		Bids, Asks  [][2]string
		Mid, Spread string
	}
	require.NoError(t, json.Unmarshal(a.body, &got), "%s", a.body)
	assert.True(t, got.Valid)
	assert.EqualValues(t, 4826378794, got.Seq)
	assert.Equal(t, [][2]string{{"0.0000007464", "15693119"}, {"0.000000746", "6021641435"}}, got.Bids)
	assert.Equal(t, [][2]string{{"0.0000007465", "2290075956"}, {"0.0000007466", "1747284705"}}, got.Asks)
	assert.Equal(t, "0.0000000001", got.Spread)
	assert.Equal(t, "0.00000074645", got.Mid)
}
