// Package format holds the small text helpers error messages of several
// packages share.
package format

import (
	"fmt"
	"strings"
)

// mostListed is how many items QuotedList names before it counts the rest.
const mostListed = 10

// QuotedList names the items of s quoted and comma-separated, the first
// ten of them, then how many more there are: an error about 1,000 topics
// stays readable.
func QuotedList(s []string) string {
	var b strings.Builder
	for i, t := range s {
		if i == mostListed {
			_, _ = fmt.Fprintf(&b, " and %d more", len(s)-mostListed)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		_, _ = fmt.Fprintf(&b, "%q", t)
	}
	return b.String()
}

// OneOf names the choices as a sentence does: "a", "a or b",
// "a, b or c".
func OneOf(choices []string) string {
	switch n := len(choices); n {
	case 0:
		return ""
	case 1:
		return choices[0]
	default:
		return strings.Join(choices[:n-1], ", ") + " or " + choices[n-1]
	}
}
