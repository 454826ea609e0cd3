package sidecar

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// A refused subscribe names each topic once: the reason as it is when it
// names them already (the upstream client's errors do), else the topics
// (shortened) before it; the reason stays in the chain either way.
func TestSubscribeErrorNamesEachTopicOnce(t *testing.T) {
	timeout := errors.New("request timed out")
	fromClient := fmt.Errorf(`failed to subscribe "a.b": %w`, timeout)

	err := subscribeError([]string{"a.b"}, fromClient)
	assert.Equal(t, `failed to subscribe "a.b": request timed out`, err.Error())
	assert.ErrorIs(t, err, timeout)

	err = subscribeError([]string{"a.b"}, timeout)
	assert.Equal(t, `failed to subscribe "a.b": request timed out`, err.Error())
	assert.ErrorIs(t, err, timeout)

	err = subscribeError([]string{"a.b", "c.d"}, fromClient)
	assert.Equal(t, `failed to subscribe "a.b", "c.d": failed to subscribe "a.b": request timed out`, err.Error(),
		"c.d is not named by the reason")

	long := strings.Repeat("x", 10_000)
	err = subscribeError([]string{long}, fmt.Errorf("failed to subscribe %q: %w", long, timeout))
	assert.Less(t, strings.Count(err.Error(), "x"), 2*len(long), "the reason is kept whole, the topic before it is shortened")
	assert.Contains(t, err.Error(), "(10000 bytes)")
}
