package client_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/ethereum"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// A part's sink is handed the place its connection's reader read in each
// message on the way (client.Sink): a book's change id, a head's number;
// 0 for a topic with no place. A standby's merge takes it, and does not
// read the message again.
func TestSinkIsHandedThePlaceTheReaderRead(t *testing.T) {
	book := gapCases[0] // Deribit's book
	pending := []byte(`"0x` + strings.Repeat("ab", 32) + `"`)
	for _, tc := range []struct {
		name     string
		server   exchangetest.Dialect
		proto    protocol.Protocol
		topic    string
		payloads [][]byte
		want     []uint64
	}{
		{"book", book.server, book.proto(), book.book, [][]byte{book.update(100, 0), book.update(101, 100)}, []uint64{100, 101}},
		{"heads", ethereum.Name, ethereum.Protocol(), "newHeads", [][]byte{head(0x10, 1, 0), head(0x11, 2, 1)}, []uint64{0x10, 0x11}},
		{"none", ethereum.Name, ethereum.Protocol(), "newPendingTransactions", [][]byte{pending}, []uint64{0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newServer(t, tc.server)
			places := sinkPlaces(t, dial(t, srv, tc.proto, fastBackoff()), tc.topic)
			require.NoError(t, srv.WaitSubscribers(testutil.Context(t), tc.topic, 1))
			for _, p := range tc.payloads {
				srv.Publish(tc.topic, p)
			}
			for _, want := range tc.want {
				assert.Equal(t, want, <-places)
			}
		})
	}
}

// sinkPlaces subscribes topic on c as a part of a merged subscription
// (NewMerge, SinkTo) and returns the places its sink is handed.
func sinkPlaces(t *testing.T, c *client.Client, topic string) <-chan uint64 {
	t.Helper()
	places := make(chan uint64, 16)
	in := c.NewMerge([]string{topic}, stayingMerge{})
	sink := client.SinkTo(in, func(_ client.Message, place uint64) { places <- place }, func(*client.Subscription, error) {})
	_, err := c.Subscribe(testutil.Context(t), []string{topic}, sink)
	require.NoError(t, err)
	return places
}

// head is a newHeads payload of block number whose hash and parent hash
// are made of the bytes hash and parent.
func head(number uint64, hash, parent byte) []byte {
	h := func(b byte) string { return "0x" + strings.Repeat(fmt.Sprintf("%02x", b), 32) }
	return fmt.Appendf(nil, `{"parentHash":"%s","number":"0x%x","hash":"%s"}`, h(parent), number, h(hash))
}

// stayingMerge is the Leaver of a merged subscription no consumer leaves.
type stayingMerge struct{}

func (stayingMerge) Leave(context.Context) error { return nil }
func (stayingMerge) LeaveAsync()                 {}
