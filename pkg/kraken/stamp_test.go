package kraken_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/wsfan/wsfan/pkg/kraken"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// TestVenueTime: Classify reads a message's stamp, as the venue
// documents it, only when asked (Frame.WantTime): a book's, a trade's
// and an order event's first item's, an ohlc message's own (not its
// candle's end).
func TestVenueTime(t *testing.T) {
	p := kraken.Protocol()
	for _, c := range []struct {
		frame string
		want  int64
	}{
		{`{"channel":"book","type":"update","data":[{"symbol":"MATIC/USD","bids":[{"price":0.5657,"qty":1098.3947558}],"asks":[],"checksum":2114181697,"timestamp":"2023-10-06T17:35:55.440295Z"}]}`, 1696613755440295000},
		{`{"channel":"trade","type":"update","data":[{"symbol":"MATIC/USD","side":"sell","price":0.5117,"qty":40.0,"ord_type":"market","trade_id":4665906,"timestamp":"2023-09-25T07:49:37.708706Z"},{"symbol":"MATIC/USD","timestamp":"2023-09-25T07:49:38.000000Z"}]}`, 1695628177708706000},
		{`{"channel":"ohlc","type":"update","timestamp":"2023-10-04T16:26:30.524394914Z","data":[{"symbol":"MATIC/USD","open":0.5624,"interval_begin":"2023-10-04T16:25:00.000000000Z","interval":5,"timestamp":"2023-10-04T16:30:00.000000Z"}]}`, 1696436790524394914},
		{`{"channel":"executions","type":"update","data":[{"order_id":"OK4GJX-KSTLS-7DZZO5","exec_type":"new","timestamp":"2023-09-22T10:33:05.709993+02:00"}]}`, 1695371585709993000},
		{`{"channel":"ticker","type":"snapshot","data":[{"symbol":"ALGO/USD","bid":0.10025,"last":0.10035}]}`, 0},
		{`{"channel":"book","type":"update","data":[{"symbol":"BTC/USD","checksum":1,"timestamp":"yesterday"}]}`, 0},
	} {
		var f protocol.Frame
		if err := p.Classify([]byte(c.frame), &f); err != nil || f.Time != 0 {
			t.Fatalf("unasked: time %d, err %v: %s", f.Time, err, c.frame)
		}
		f.WantTime = true
		if err := p.Classify([]byte(c.frame), &f); err != nil || f.Time != c.want {
			t.Errorf("time %d, want %d (err %v): %s", f.Time, c.want, err, c.frame)
		}
	}
}

// FuzzRFC3339: the stamp reader agrees with time.Parse(RFC3339Nano) on
// what it reads, and reads every time Kraken's format writes.
func FuzzRFC3339(f *testing.F) {
	for _, s := range []string{"2023-10-06T17:35:55.440295Z", "2023-10-04T16:26:30.524394914Z", "2023-09-21T15:49:29Z",
		"2024-02-29T00:00:00.1+05:30", "2023-02-29T00:00:00Z", "2023-10-06T24:00:00Z", "1969-12-31T23:59:59Z", "2023-10-06T17:35:55.Z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ns, ok := kraken.RFC3339([]byte(strconv.Quote(s)))
		if !ok {
			return
		}
		want, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatalf("%q read as %d; time.Parse: %v", s, ns, err)
		}
		if want.UnixNano() != ns {
			t.Fatalf("%q read as %d, time.Parse %d", s, ns, want.UnixNano())
		}
		if again, ok := kraken.RFC3339([]byte(`"` + want.UTC().Format("2006-01-02T15:04:05.000000Z") + `"`)); !ok || again != ns/1000*1000 {
			t.Fatalf("%q: Kraken's form of it read as %d, %v", s, again, ok)
		}
	})
}
