package protocol

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/wsfan/wsfan/internal/format"
)

// Dialect is one exchange's wire format, both halves, under the name
// ByName, ServerByName and the sidecar's -protocol take. Each exchange
// package registers its own from init, so importing it (for its side
// effect, as with database/sql drivers) is what makes its name known:
//
//	import _ "github.com/wsfan/wsfan/pkg/deribit"
type Dialect struct {
	// Name is the dialect's name in lower case: "deribit".
	Name string
	// Protocol returns the client half with its default options.
	Protocol func() Protocol
	// Server returns the server half.
	Server func() Server
}

// registry holds the registered dialects by name; Register writes it at
// init, everything else reads it.
var registry struct {
	mu     sync.RWMutex
	byName map[string]Dialect
}

// Register makes d known by its name. It panics if d is incomplete or
// its name is taken: both are programming errors found at start-up.
func Register(d Dialect) {
	if d.Name == "" || d.Name != strings.ToLower(d.Name) || d.Protocol == nil || d.Server == nil {
		panic(fmt.Sprintf("protocol: Register of an incomplete dialect %q (want a lower-case name and both halves)", d.Name))
	}
	registry.mu.Lock()
	defer registry.mu.Unlock()
	if _, taken := registry.byName[d.Name]; taken {
		panic(fmt.Sprintf("protocol: dialect %q registered twice", d.Name))
	}
	if registry.byName == nil {
		registry.byName = make(map[string]Dialect)
	}
	registry.byName[d.Name] = d
}

// Names returns the registered dialects' names, sorted.
func Names() []string {
	registry.mu.RLock()
	defer registry.mu.RUnlock()
	names := make([]string, 0, len(registry.byName))
	for name := range registry.byName {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// lookup returns the dialect called name, in any case.
func lookup(name string) (Dialect, error) {
	registry.mu.RLock()
	d, ok := registry.byName[strings.ToLower(name)]
	registry.mu.RUnlock()
	if ok {
		return d, nil
	}
	names := Names()
	if len(names) == 0 {
		return Dialect{}, fmt.Errorf("protocol: unknown dialect %q: none is registered (import an exchange package, such as github.com/wsfan/wsfan/pkg/thalex)", name)
	}
	return Dialect{}, fmt.Errorf("protocol: unknown dialect %q (want %s): a dialect is registered by importing its exchange's package, as in import _ \"github.com/wsfan/wsfan/pkg/%s\" for one of wsfan's",
		name, format.OneOf(names), strings.ToLower(name))
}

// ByName returns the client half of the dialect called name (in any
// case), with its default options.
func ByName(name string) (Protocol, error) {
	d, err := lookup(name)
	if err != nil {
		return nil, err
	}
	return d.Protocol(), nil
}

// ServerByName returns the server half of the dialect called name (in any
// case).
func ServerByName(name string) (Server, error) {
	d, err := lookup(name)
	if err != nil {
		return nil, err
	}
	return d.Server(), nil
}
