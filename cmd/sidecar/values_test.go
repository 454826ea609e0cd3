package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestParseSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"1048576", 1 << 20, true},
		{"4MiB", 4 << 20, true},
		{"4 MiB", 4 << 20, true},
		{"512KiB", 512 << 10, true},
		{"512kib", 512 << 10, true},
		{"1GiB", 1 << 30, true},
		{"100B", 100, true},
		{"0", 0, true},
		{" 64KiB ", 64 << 10, true},
		{"4MB", 0, false}, // decimal units are refused, not guessed
		{"4M", 0, false},
		{"1.5MiB", 0, false},
		{"-1", 0, false},
		{"+4MiB", 0, false},
		{"MiB", 0, false},
		{"", 0, false},
		{"1_048_576", 0, false},
		{"8589934592GiB", 0, false}, // 2^63 bytes: out of range
	} {
		got, err := parseSize(tc.in)
		if tc.ok {
			assert.NoError(t, err, tc.in)
			assert.Equal(t, tc.want, got, tc.in)
		} else {
			assert.Error(t, err, tc.in)
		}
	}
}

func TestFormatSize(t *testing.T) {
	for n, want := range map[int64]string{0: "", 1000: "1000", 4 << 20: "4MiB", 512 << 10: "512KiB", 3 << 30: "3GiB", 1<<20 + 1: "1048577"} {
		assert.Equal(t, want, formatSize(n))
	}
}
