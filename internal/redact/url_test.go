package redact

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestURL(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		// What endpoints are told apart by stays.
		{"wss://thalex.com/ws/api/v2", "wss://thalex.com/ws/api/v2"},
		// Written without a scheme: shown, so the mistake can be seen,
		// with its secrets hidden as they would be with one.
		{"thalex.com/ws/api/v2", "thalex.com/ws/api/v2"},
		{"127.0.0.1:1", "127.0.0.1:1"},
		{"user:hunter2@mainnet.example.com/v3/0123456789abcdef0123", "mainnet.example.com/v3/REDACTED"},
		{"ws://127.0.0.1:8765/ws", "ws://127.0.0.1:8765/ws"},
		{"wss://www.deribit.com/ws/api/v2", "wss://www.deribit.com/ws/api/v2"},
		{"ws://[::1]:9000/", "ws://[::1]:9000/"},
		{"wss://eth-mainnet.example.com/ethereum-mainnet", "wss://eth-mainnet.example.com/ethereum-mainnet"},
		// Userinfo.
		{"ws://user:pass0word@node.example:8546/", "ws://node.example:8546/"},
		{"ws://user@node.example/", "ws://node.example/"},
		// Keys in the path: Infura (32 hex), Alchemy (base62), QuickNode (40 hex), a UUID.
		{"wss://mainnet.infura.io/ws/v3/a1b2c3d4e5f60718293a4b5c6d7e8f90", "wss://mainnet.infura.io/ws/v3/REDACTED"},
		{"wss://eth-mainnet.g.alchemy.com/v2/Xk3vQ9pLm2Rt8sWz4YbN7cD1eF6gH0jK", "wss://eth-mainnet.g.alchemy.com/v2/REDACTED"},
		{"wss://x.quiknode.pro/3f7a9c1e5b2d8f4a6c0e9b1d3f5a7c9e1b3d5f7a/", "wss://x.quiknode.pro/REDACTED/"},
		{"wss://node.example/123e4567-e89b-12d3-a456-426614174000/ws", "wss://node.example/REDACTED/ws"},
		// Query values, keys kept; a bare key word.
		{"wss://node.example/ws?apikey=s3cr3t&chain=1", "wss://node.example/ws?apikey=REDACTED&chain=REDACTED"},
		{"wss://node.example/ws?a1b2c3d4e5f60718293a", "wss://node.example/ws?REDACTED"},
		// Fragment.
		{"wss://node.example/ws#k=a1b2c3d4e5f60718293a", "wss://node.example/ws"},
		// All at once.
		{"ws://user:pass0word@127.0.0.1:1/v3/a1b2c3d4e5f60718293a4b5c6d7e8f90?apikey=zz9", "ws://127.0.0.1:1/v3/REDACTED?apikey=REDACTED"},
		// Unparseable: scheme and host only.
		{"ws://us er:p@ss@host.example:1/v3/abc", "ws://host.example:1/REDACTED"},
		{"not a url at all: ::", "REDACTED"},
	} {
		got := URL(tc.in)
		assert.Equal(t, tc.want, got, tc.in)
		assert.Equal(t, got, URL(got), "idempotent: %s", tc.in)
	}
}

func TestSecret(t *testing.T) {
	for _, s := range []string{"a1b2c3d4e5f60718", "Xk3vQ9pLm2Rt8sWz4YbN", "abc-123_def.456~ghi"} {
		assert.True(t, Secret(s), s)
	}
	for _, s := range []string{"", "v3", "ws", "api", "ethereum-mainnet", "abcdefghijklmnopqrstuvwxyz", "1234567890123456789", "a1b2c3d4e5f6071", "a1b2c3d4e5f60718/x"} {
		assert.False(t, Secret(s), s)
	}
}

// FuzzURL: redaction never panics, is idempotent, and never shows a
// password.
func FuzzURL(f *testing.F) {
	for _, s := range []string{"ws://u:p@h/v3/a1b2c3d4e5f60718293a?k=v#f", "wss://h", "://", "ws://[::1]:1/%zz", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		got := URL(raw)
		if URL(got) != got {
			t.Fatalf("not idempotent: %q -> %q -> %q", raw, got, URL(got))
		}
		const password = "pw0secret0pw"
		with := strings.Replace(raw, "://", "://user:"+password+"@", 1)
		if strings.Contains(URL(with), password) {
			t.Fatalf("password shown: %q -> %q", with, URL(with))
		}
	})
}
