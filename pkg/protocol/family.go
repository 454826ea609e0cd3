package protocol

import (
	"strings"

	"github.com/wsfan/wsfan/internal/jsonscan"
)

// Family is a topic's channel family, the label a latency histogram
// counts its messages under: a bounded set, where topic names are not.
// It is the name up to its first '.' or ':' — Deribit's and Thalex's
// first dot segment ("book" of "book.BTC-PERPETUAL.100ms"), OKX's,
// Ethereal's and Kraken's channel ("tickers" of "tickers:BTC-USDT") —
// or, for a name that is a JSON array (an Ethereum subscription's
// params), its first string, the subscription kind ("logs" of
// ["logs",{…}]); a bare Ethereum name ("newHeads") is its own family.
func Family(name string) string {
	if t := strings.TrimSpace(name); strings.HasPrefix(t, "[") {
		name = t
		b := []byte(name)
		i := jsonscan.SkipSpace(b, 1)
		if i < len(b) && b[i] == '"' {
			if end := strings.IndexByte(name[i+1:], '"'); end >= 0 {
				return name[i+1 : i+1+end]
			}
		}
		return ""
	}
	if i := strings.IndexAny(name, ".:"); i >= 0 {
		return name[:i]
	}
	return name
}
