package sidecar_test

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/sidecar"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// tokenGet asks path with the bearer token on cl and returns the status
// and the Retry-After header.
func tokenGet(ctx context.Context, cl *http.Client, url, token string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := cl.Do(req)
	if err != nil {
		return 0, "", err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Retry-After"), nil
}

// Token guessing is slowed: wrong tokens hammered from one address on
// four connections are answered at a bounded rate past the first ones,
// the slowing is counted and logged once, while the right token from the
// same address is answered at once; more wrong tokens waiting at once
// than allowed are refused with 429 and Retry-After.
func TestWrongTokensSlowedRightTokenNot(t *testing.T) {
	const token = "s3cret-token"
	core, logs := observer.New(zap.WarnLevel)
	r := newRig(t, thalex.Name, func(c *sidecar.Config) { c.Token = token; c.Logger = zap.New(core) })

	const window = 2 * time.Second
	ctx, cancel := context.WithTimeout(testutil.Context(t), window)
	defer cancel()
	var answered atomic.Int64 // wrong tokens answered within the window
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tr := &http.Transport{}
			defer tr.CloseIdleConnections()
			cl := &http.Client{Transport: tr}
			for ctx.Err() == nil {
				code, _, err := tokenGet(ctx, cl, r.url+"/v1/status", "wrong")
				if err != nil {
					if ctx.Err() == nil {
						t.Errorf("a wrong token: %v", err)
					}
					return
				}
				if code == http.StatusOK {
					t.Errorf("a wrong token answered 200")
					return
				}
				answered.Add(1)
			}
		}()
	}

	// Well into the slowing, the right token from the same address.
	time.Sleep(window / 2)
	for range 3 {
		start := time.Now()
		code, _, err := tokenGet(testutil.Context(t), http.DefaultClient, r.url+"/v1/status", token)
		require.NoError(t, err)
		assert.Equal(t, http.StatusOK, code)
		assert.Less(t, time.Since(start), time.Second, "the right token was delayed")
	}
	wg.Wait()
	n := answered.Load()
	t.Logf("%d wrong tokens answered in %v", n, window)
	// 64 at once, then 10 a second: about 85; unguarded, thousands.
	assert.Less(t, n, int64(200), "wrong tokens answered in %v", window)
	assert.Equal(t, 1, logs.FilterMessageSnippet("slowing down wrong tokens").Len(), "logged once for the episode")

	// 24 at once: 16 wait their turn, the rest are refused at once.
	var refused, retryAfter atomic.Int64
	for range 24 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tr := &http.Transport{}
			defer tr.CloseIdleConnections()
			code, retry, err := tokenGet(testutil.Context(t), &http.Client{Transport: tr}, r.url+"/v1/status", "wrong")
			if err != nil {
				t.Errorf("a wrong token: %v", err)
				return
			}
			if code == http.StatusTooManyRequests {
				refused.Add(1)
				if retry != "" {
					retryAfter.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	assert.Positive(t, refused.Load(), "none refused with 429")
	assert.Equal(t, refused.Load(), retryAfter.Load(), "a 429 without Retry-After")

	code, metrics, err := func() (int, string, error) {
		req, err := http.NewRequestWithContext(testutil.Context(t), http.MethodGet, r.url+"/metrics", nil)
		if err != nil {
			return 0, "", err
		}
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, "", err
		}
		defer func() { _ = resp.Body.Close() }()
		b, err := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), err
	}()
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, code)
	assert.Positive(t, sampleOf(t, metrics, "wsfan_sidecar_token_delayed_total"))
	assert.Positive(t, sampleOf(t, metrics, "wsfan_sidecar_token_throttled_total"))
	assert.Equal(t, 1.0, sampleOf(t, metrics, "wsfan_sidecar_token_slowed_addresses"))
}

// sampleOf returns the value of the unlabelled metric name in a /metrics
// body.
func sampleOf(t *testing.T, metrics, name string) float64 {
	t.Helper()
	for _, line := range strings.Split(metrics, "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			require.NoError(t, err, line)
			return f
		}
	}
	t.Fatalf("no %s in /metrics", name)
	return 0
}
