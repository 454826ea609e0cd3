package protocol

import (
	"fmt"
	"strings"
)

// dialects is every dialect wsfan speaks, by name, with its two halves:
// the one table ByName and ServerByName read.
var dialects = [...]struct {
	name   string
	client func() Protocol
	server func() Server
}{
	{"thalex", Thalex, ThalexServer},
	{"deribit", func() Protocol { return Deribit() }, DeribitServer},
	{"ethereum", Ethereum, EthereumServer},
	{"ethereal", Ethereal, EtherealServer},
}

// dialectNamed returns the index in dialects of the dialect called name,
// in any case.
func dialectNamed(name string) (int, error) {
	for i, d := range dialects {
		if strings.EqualFold(name, d.name) {
			return i, nil
		}
	}
	return 0, fmt.Errorf("protocol: unknown dialect %q (want thalex, deribit, ethereum or ethereal)", name)
}

// ServerByName returns the server half of the dialect called name
// (thalex, deribit, ethereum or ethereal, in any case).
func ServerByName(name string) (Server, error) {
	i, err := dialectNamed(name)
	if err != nil {
		return nil, err
	}
	return dialects[i].server(), nil
}
