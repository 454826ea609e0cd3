package faultproxy

import "go.uber.org/goleak"

// IgnoreStranded is the goleak options of a package whose tests use
// toxics that strand goroutines (Stranded): each stranded function is
// ignored as the top of a goroutine's stack.
func IgnoreStranded() []goleak.Option {
	ignore := make([]goleak.Option, len(Stranded))
	for i, f := range Stranded {
		ignore[i] = goleak.IgnoreTopFunction(f)
	}
	return ignore
}
