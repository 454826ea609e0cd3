package auth_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/pkg/auth"
)

func TestSecretFromTheEnvironment(t *testing.T) {
	t.Setenv("WSFAN_TEST_SECRET", "from-env")
	t.Setenv("WSFAN_TEST_SECRET_FILE", "/nonexistent")
	s, err := auth.Secret("WSFAN_TEST_SECRET")
	require.NoError(t, err)
	assert.Equal(t, "from-env", s, "the variable wins over the file")
}

func TestSecretFromAFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "secret")
	require.NoError(t, os.WriteFile(path, []byte("-----BEGIN RSA PRIVATE KEY-----\nabc\n-----END RSA PRIVATE KEY-----\n"), 0o600))
	t.Setenv("WSFAN_TEST_SECRET_FILE", path)
	s, err := auth.Secret("WSFAN_TEST_SECRET")
	require.NoError(t, err)
	assert.Equal(t, "-----BEGIN RSA PRIVATE KEY-----\nabc\n-----END RSA PRIVATE KEY-----", s)
}

func TestSecretMissing(t *testing.T) {
	_, err := auth.Secret("WSFAN_TEST_SECRET")
	assert.EqualError(t, err, "auth: secret WSFAN_TEST_SECRET: set $WSFAN_TEST_SECRET or $WSFAN_TEST_SECRET_FILE")

	t.Setenv("WSFAN_TEST_SECRET_FILE", filepath.Join(t.TempDir(), "missing"))
	_, err = auth.Secret("WSFAN_TEST_SECRET")
	assert.ErrorIs(t, err, os.ErrNotExist)
}

func TestBearer(t *testing.T) {
	assert.Equal(t, "Bearer t0ken", auth.Bearer("t0ken").Get("Authorization"))
}
