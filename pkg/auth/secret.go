package auth

import (
	"fmt"
	"net/http"
	"os"
	"strings"
)

// Secret reads a secret from the environment: the variable name, or, when
// it is unset, the file named by the variable name_FILE (the way container
// platforms mount secrets), without its trailing newline. Neither the
// secret nor the file's contents appear in its errors.
func Secret(name string) (string, error) {
	if v, ok := os.LookupEnv(name); ok {
		return v, nil
	}
	path, ok := os.LookupEnv(name + "_FILE")
	if !ok {
		return "", fmt.Errorf("auth: secret %s: set $%s or $%s_FILE", name, name, name)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("auth: secret %s: %w", name, err)
	}
	return strings.TrimRight(string(b), "\r\n"), nil
}

// Bearer returns the handshake header "Authorization: Bearer token", for
// servers that authenticate the WebSocket upgrade, as Ethereum node
// providers do: client.WithHeader(auth.Bearer(token)).
func Bearer(token string) http.Header {
	return http.Header{"Authorization": {"Bearer " + token}}
}
