package jsonscan

import "testing"

// First returns an array's first element, nil for an empty one, and the
// scan's error for one that is not an array.
func TestFirst(t *testing.T) {
	for _, c := range []struct {
		in, want string
		err      bool
	}{
		{`[{"a":1},2]`, `{"a":1}`, false},
		{` [ "x" ]`, `"x"`, false},
		{`[]`, ``, false},
		{`{"a":1}`, ``, true},
	} {
		got, err := First([]byte(c.in), 0)
		if string(got) != c.want || (err != nil) != c.err {
			t.Errorf("First(%s) = %q, %v; want %q, error %v", c.in, got, err, c.want, c.err)
		}
	}
}
