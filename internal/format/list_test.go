package format

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestQuotedList(t *testing.T) {
	require.Equal(t, "", QuotedList(nil))
	require.Equal(t, `"a.b", "c\"d"`, QuotedList([]string{"a.b", `c"d`}))
	many := make([]string, 12)
	for i := range many {
		many[i] = fmt.Sprint(i)
	}
	require.Equal(t, `"0", "1", "2", "3", "4", "5", "6", "7", "8", "9" and 2 more`, QuotedList(many))
}
