package ethereum

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/venue"
)

// exchange is how Ethereum nodes behave beyond the wire format, for test
// servers and the sidecar's demo.
var exchange = &venue.Exchange{
	// A request over a provider's rate limit: -32005, "limit exceeded"
	// (EIP-1474).
	Throttled: &protocol.Error{Code: codeThrottled, Message: "limit exceeded"},
	Feed:      func(seed uint64) venue.Simulation { return newFeed(seed) },
	// go-ethereum's default --rpc.batch-request-limit.
	MaxBatch: 1000,
	Methods: map[string]func([]string, time.Time) any{
		"eth_chainId": func([]string, time.Time) any { return "0x1" },
		// Before the feed has run the chain is at its first block.
		"eth_blockNumber": func([]string, time.Time) any { return hexU64(firstBlock) },
	},
	FeedMethods: map[string]func(venue.Simulation, time.Time) any{
		// The last head the feed made, so a program that reads it and
		// then subscribes newHeads sees the numbers follow.
		"eth_blockNumber": func(f venue.Simulation, _ time.Time) any { return hexU64(f.(*feed).block) },
	},
}

// firstBlock is the made-up chain's height before the feed's first head.
const firstBlock = 19_000_000

// feed makes up a chain's newHeads: a block a round, each naming the one
// before.
type feed struct {
	m          *venue.Market
	block      uint64
	parentHash string
	baseFee    uint64
}

func newFeed(seed uint64) *feed {
	return &feed{m: venue.NewMarket(seed), block: firstBlock, parentHash: "0x" + strings.Repeat("ab", 32), baseFee: 12_000_000_000}
}

// Instruments: a node has none.
func (*feed) Instruments() []string { return nil }

// Topics is newHeads.
func (*feed) Topics([]string) []venue.FeedTopic {
	return []venue.FeedTopic{{Topic: "newHeads", Kind: venue.FeedOther}}
}

func (f *feed) Advance(now time.Time) { f.m.Advance(now) }

func (f *feed) Payload(venue.FeedTopic) []byte {
	rng := f.m.Rand()
	f.block++
	h := head{
		Number:        hexU64(f.block),
		Hash:          f.hash32(),
		ParentHash:    f.parentHash,
		Miner:         "0x95222290dd7278aa3ddd389cc1e1d165cc4bafe5",
		StateRoot:     f.hash32(),
		Timestamp:     hexU64(uint64(f.m.Now().Unix())),
		GasLimit:      hexU64(30_000_000),
		GasUsed:       hexU64(10_000_000 + rng.Uint64N(20_000_000)),
		BaseFeePerGas: hexU64(f.baseFee),
		Difficulty:    "0x0",
		Nonce:         "0x0000000000000000",
	}
	f.parentHash = h.Hash
	f.baseFee = uint64(float64(f.baseFee) * (0.9 + rng.Float64()*0.2))
	return venue.MarshalPayload(h)
}

func (f *feed) hash32() string {
	rng := f.m.Rand()
	return fmt.Sprintf("0x%016x%016x%016x%016x", rng.Uint64(), rng.Uint64(), rng.Uint64(), rng.Uint64())
}

func hexU64(v uint64) string { return "0x" + strconv.FormatUint(v, 16) }

// head is a newHeads notification's payload.
type head struct {
	Number        string `json:"number"`
	Hash          string `json:"hash"`
	ParentHash    string `json:"parentHash"`
	Miner         string `json:"miner"`
	StateRoot     string `json:"stateRoot"`
	Timestamp     string `json:"timestamp"`
	GasLimit      string `json:"gasLimit"`
	GasUsed       string `json:"gasUsed"`
	BaseFeePerGas string `json:"baseFeePerGas"`
	Difficulty    string `json:"difficulty"`
	Nonce         string `json:"nonce"`
}
