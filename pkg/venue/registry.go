package venue

import (
	"fmt"
	"strings"
	"sync"
)

// registry holds each venue's Exchange by dialect name; Register writes
// it at init, everything else reads it.
var registry struct {
	mu     sync.RWMutex
	byName map[string]*Exchange
}

// Register makes ex the behaviour of the servers of the dialect called
// name (lower case, as protocol.Register has it). It panics if the name
// is taken: a programming error found at start-up.
func Register(name string, ex *Exchange) {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	if _, taken := registry.byName[name]; taken {
		panic(fmt.Sprintf("venue: %q registered twice", name))
	}
	if registry.byName == nil {
		registry.byName = make(map[string]*Exchange)
	}
	registry.byName[name] = ex
}

// ByName returns how the servers of the dialect called name (in any case)
// behave, or an empty Exchange, plain JSON-RPC behaviour, when it
// registered none.
func ByName(name string) *Exchange {
	registry.mu.RLock()
	defer registry.mu.RUnlock()
	if ex := registry.byName[strings.ToLower(name)]; ex != nil {
		return ex
	}
	return &Exchange{}
}
