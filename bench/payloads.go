package bench

import (
	"fmt"
	"strings"
	"sync"
)

// Frames the parse benchmarks classify and decode, in the sizes of the
// reports: an RPC response (~30 B), a market price ticker (~100 B), an
// order book (~300 B) and a large ticker (~500 B), all Thalex frames.
var (
	FrameRPC    = []byte(`{"id":12345,"result":{"ok":1}}`)
	FrameTicker = []byte(`{"channel_name":"ticker.BTC-PERPETUAL.raw","notification":{"mark_price":68012.81,"index":68009.7}}`)
	FrameBook   = []byte(`{"channel_name":"book.BTC-PERPETUAL.none.10.100ms","notification":{"time":1737043200.123,"bids":[[68012.5,1.25],[68012.0,0.4],[68011.5,2.1],[68010.0,0.75],[68009.5,3.3]],"asks":[[68013.0,0.4],[68013.5,1.1],[68014.0,0.25],[68015.5,5.0],[68016.0,0.9]],"checksum":3942312}}`)
	FrameLarge  = []byte(`{"channel_name":"ticker.BTC-PERPETUAL.raw","notification":{"best_bid_price":68012.5,"best_bid_amount":1.25,"best_ask_price":68013.0,"best_ask_amount":0.4,"last_price":68012.5,"mark_price":68012.81,"mark_timestamp":1737043200.123456,"iv":0.0,"delta":1.0,"volume_24h":12504.22,"value_24h":850304112.5,"low_price_24h":66850.0,"high_price_24h":68420.5,"change_24h":1.84,"index":68009.74,"forward":68011.2,"funding_mark":0.00001234,"funding_rate":0.0000125,"open_interest":8421.7}}`)
)

// Ticker is the typed form of FrameTicker's and FrameLarge's notification.
type Ticker struct {
	BestBidPrice  float64 `json:"best_bid_price"`
	BestBidAmount float64 `json:"best_bid_amount"`
	BestAskPrice  float64 `json:"best_ask_price"`
	BestAskAmount float64 `json:"best_ask_amount"`
	LastPrice     float64 `json:"last_price"`
	MarkPrice     float64 `json:"mark_price"`
	MarkTimestamp float64 `json:"mark_timestamp"`
	IV            float64 `json:"iv"`
	Delta         float64 `json:"delta"`
	Volume24h     float64 `json:"volume_24h"`
	Value24h      float64 `json:"value_24h"`
	Low24h        float64 `json:"low_price_24h"`
	High24h       float64 `json:"high_price_24h"`
	Change24h     float64 `json:"change_24h"`
	Index         float64 `json:"index"`
	Forward       float64 `json:"forward"`
	FundingMark   float64 `json:"funding_mark"`
	FundingRate   float64 `json:"funding_rate"`
	OpenInterest  float64 `json:"open_interest"`
}

// Book is the typed form of FrameBook's notification.
type Book struct {
	Time     float64      `json:"time"`
	Bids     [][2]float64 `json:"bids"`
	Asks     [][2]float64 `json:"asks"`
	Checksum uint32       `json:"checksum"`
}

// ThalexFrame is a Thalex frame decoded in full: the reports' "full parse".
type ThalexFrame[T any] struct {
	ID           uint64 `json:"id,omitempty"`
	Result       *T     `json:"result,omitempty"`
	ChannelName  string `json:"channel_name,omitempty"`
	Notification *T     `json:"notification,omitempty"`
}

// hash returns a 32-byte hex hash ("0x" and 64 digits) derived from i.
func hash(i int) string { return fmt.Sprintf("0x%064x", uint64(i)*0x9e3779b97f4a7c15) }

// address returns a 20-byte hex address derived from i.
func address(i int) string { return fmt.Sprintf("0x%040x", uint64(i)*0x9e3779b97f4a7c15) }

// NewHeads is the payload of an Ethereum newHeads notification. The frame
// the server wraps it in is about 615 bytes, the size of the blast in
// REFERENCE.md.
var NewHeads = []byte(fmt.Sprintf(`{"parentHash":"%s","miner":"%s","stateRoot":"%s","transactionsRoot":"%s","number":"0x1406f40","gasLimit":"0x1c9c380","gasUsed":"0xe4e1c0","timestamp":"0x6789a3c0","baseFeePerGas":"0x3b9aca00","hash":"%s"}`,
	hash(1), address(2), hash(3), hash(4), hash(6)))

// Log is an eth_getLogs entry decoded into a typed struct.
type Log struct {
	Address          string   `json:"address"`
	Topics           []string `json:"topics"`
	Data             string   `json:"data"`
	BlockNumber      string   `json:"blockNumber"`
	TransactionHash  string   `json:"transactionHash"`
	TransactionIndex string   `json:"transactionIndex"`
	BlockHash        string   `json:"blockHash"`
	LogIndex         string   `json:"logIndex"`
	Removed          bool     `json:"removed"`
}

var (
	logsMu   sync.Mutex
	logsJSON = map[int][]byte{}
)

// Logs returns the JSON array of n eth_getLogs entries (ERC-20 Transfer
// events, about 700 bytes each), built once per n.
func Logs(n int) []byte {
	logsMu.Lock()
	defer logsMu.Unlock()
	if b, ok := logsJSON[n]; ok {
		return b
	}
	var sb strings.Builder
	sb.Grow(n * 720)
	sb.WriteByte('[')
	for i := range n {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `{"address":"%s","topics":["0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef","%s","%s"],"data":"%s","blockNumber":"0x%x","transactionHash":"%s","transactionIndex":"0x%x","blockHash":"%s","logIndex":"0x%x","removed":false}`,
			address(i%50), hash(2*i), hash(2*i+1), hash(i*7), 0x1406f40+i/100, hash(i*11), i%100, hash(i/100), i)
	}
	sb.WriteByte(']')
	logsJSON[n] = []byte(sb.String())
	return logsJSON[n]
}

// Payload sizes of the end-to-end RPC benchmarks (geeRPC: small ~100 B,
// medium ~10 KB, large ~1 MB).
var PayloadSizes = []struct {
	Name string
	Size int
}{{"small", 100}, {"medium", 10 << 10}, {"large", 1 << 20}}

var (
	payloadMu sync.Mutex
	payloads  = map[int][]byte{}
)

// Payload returns a JSON result of about size bytes, built once per size:
// an array of 32-byte hashes, or a small object for size < 200.
func Payload(size int) []byte {
	payloadMu.Lock()
	defer payloadMu.Unlock()
	if b, ok := payloads[size]; ok {
		return b
	}
	var b []byte
	if size < 200 {
		b = []byte(fmt.Sprintf(`{"number":"0x1406f40","hash":"%s"}`, hash(1)))
	} else {
		b = append(b, '[')
		for len(b)+70 < size {
			if len(b) > 1 {
				b = append(b, ',')
			}
			b = append(b, '"')
			b = append(b, hash(len(b))...)
			b = append(b, '"')
		}
		b = append(b, ']')
	}
	payloads[size] = b
	return b
}
