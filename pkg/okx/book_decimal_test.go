package okx_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/book"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/okx"
)

// fineTickFrame is the books5 push of OKB-USDT in testdata/documented.txt
// priced in ticks below 1e-8, with sizes beyond 10^9 (gocryptotrader's
// recording).
func fineTickFrame(t *testing.T) []byte {
	t.Helper()
	for _, f := range documented(t) {
		if strings.Contains(string(f), `"instId":"OKB-USDT"`) {
			return f
		}
	}
	t.Fatal("no OKB-USDT frame in testdata/documented.txt")
	return nil
}

// levelStrings are levels as the exchange wrote them.
func levelStrings(ls []book.Level) [][2]string {
	out := make([][2]string, 0, len(ls))
	for _, l := range ls {
		out = append(out, [2]string{l.Price.String(), l.Size.String()})
	}
	return out
}

// book.Follow keeps an OKX book priced in 1e-10 ticks, exactly as OKX
// wrote it.
func TestFollowHoldsFineTicksExactly(t *testing.T) {
	const topic = "books5:OKB-USDT"
	srv := exchangetest.NewServer(okx.Name)
	t.Cleanup(srv.Close)
	ctx := testutil.Context(t)
	c, err := client.Dial(ctx, srv.URL(), client.WithProtocol(okx.Protocol()))
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	f, err := book.Follow(ctx, c, topic)
	require.NoError(t, err)
	t.Cleanup(func() { _ = f.Close(ctx) })
	require.NoError(t, srv.WaitSubscribers(ctx, topic, 1))

	require.Equal(t, 1, srv.PublishRaw(fineTickFrame(t)))
	select {
	case ev := <-f.Events():
		require.Equal(t, book.Synced, ev.Kind, "%v", ev)
	case <-ctx.Done():
		t.Fatal("the book never turned valid")
	}
	bids, asks, ok := f.Top(0, nil, nil)
	require.True(t, ok)
	assert.Equal(t, [][2]string{{"0.0000007464", "15693119"}, {"0.000000746", "6021641435"}}, levelStrings(bids))
	assert.Equal(t, [][2]string{{"0.0000007465", "2290075956"}, {"0.0000007466", "1747284705"}}, levelStrings(asks))
	assert.EqualValues(t, 4826378794, f.Seq())
	assert.Zero(t, f.Stats().Breaks)
}

// The SDK's book of a chained OKX channel at BABYDOGE-USDT's tick of
// 1e-12, sizes above 10^10 and an 18-decimal amount: the snapshot and a
// change one tick away are held exactly, and the snapshot a late joiner
// gets writes them back unchanged.
func TestBookHoldsPicoTicksAndLargeSizes(t *testing.T) {
	const topic = "books:BABYDOGE-USDT"
	srv := exchangetest.NewServer(okx.Name)
	t.Cleanup(srv.Close)
	ctx := testutil.Context(t)
	c, err := client.Dial(ctx, srv.URL(), client.WithProtocol(okx.Protocol()))
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	sub, err := c.Subscribe(ctx, []string{topic})
	require.NoError(t, err)
	require.NoError(t, srv.WaitSubscribers(ctx, topic, 1))

	frames := []string{
		`{"arg":{"channel":"books","instId":"BABYDOGE-USDT"},"action":"snapshot","data":[{"asks":[["0.000000001235","98765432109.5","0","3"],["0.000000001236","12345678901234","0","9"]],"bids":[["0.000000001234","25000000000","0","2"],["0.000000001233","0.123456789012345678","0","1"]],"ts":"1695864901807","checksum":0,"prevSeqId":-1,"seqId":700}]}`,
		`{"arg":{"channel":"books","instId":"BABYDOGE-USDT"},"action":"update","data":[{"asks":[["0.000000001235","0","0","0"]],"bids":[["0.000000001234","25000000000.000000000001","0","3"]],"ts":"1695864901907","checksum":0,"prevSeqId":700,"seqId":701}]}`,
	}
	b := book.New(topic, okx.BookRules(topic))
	for i, frame := range frames {
		require.Equal(t, 1, srv.PublishRaw([]byte(frame)))
		select {
		case m := <-sub.C():
			require.NoError(t, b.Apply(m.Data, m.Snapshot()), "message %d", i)
		case <-ctx.Done():
			t.Fatalf("message %d never came", i)
		}
	}
	s := b.Copy()
	require.True(t, s.Valid)
	assert.Equal(t, [][2]string{{"0.000000001234", "25000000000.000000000001"}, {"0.000000001233", "0.123456789012345678"}}, levelStrings(s.Bids))
	assert.Equal(t, [][2]string{{"0.000000001236", "12345678901234"}}, levelStrings(s.Asks))
	assert.Equal(t, "0.000000000002", s.Asks[0].Price.Sub(s.Bids[0].Price).String(), "two ticks apart")

	snap, ok := b.AppendSnapshot(nil)
	require.True(t, ok)
	again := book.New(topic, okx.BookRules(topic))
	require.NoError(t, again.Apply(snap, true), "%s", snap)
	assert.Equal(t, s.Bids, again.Copy().Bids)
	assert.Equal(t, s.Asks, again.Copy().Asks)
}
