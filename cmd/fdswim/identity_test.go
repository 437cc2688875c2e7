package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// --identity-file: created with mode 0600 on a first start, the same key on
// the next; a bad file is refused with its name and line.
func TestIdentityFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "id")
	k1, created, err := loadIdentity(path)
	require.NoError(t, err)
	assert.True(t, created)
	st, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	k2, created, err := loadIdentity(path)
	require.NoError(t, err)
	assert.False(t, created)
	assert.True(t, k1.Equal(k2), "a restart keeps the key")

	f := agentFlags{logLevel: "warn", mode: "detector", plain: true, identityFile: path}
	var stderr bytes.Buffer
	cfg, err := f.config(&stderr)
	require.NoError(t, err)
	assert.True(t, k1.Equal(cfg.Protocol.SigningKey))

	for name, body := range map[string]string{
		"bad hex":  "# comment\nzz\n",
		"short":    strings.Repeat("ab", 31) + "\n",
		"empty":    "# only a comment\n",
		"oversize": strings.Repeat("#", identityFileMax+1),
	} {
		p := filepath.Join(dir, strings.ReplaceAll(name, " ", "_"))
		require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
		_, _, err := loadIdentity(p)
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), "--identity-file "+p, name)
		if name == "bad hex" {
			assert.Contains(t, err.Error(), p+":2:")
		}
	}
	_, _, err = loadIdentity(filepath.Join(dir, "missing", "id"))
	assert.ErrorContains(t, err, "--identity-file")

	seed := make([]byte, ed25519.SeedSize)
	seed[0] = 7
	p := filepath.Join(dir, "known")
	require.NoError(t, os.WriteFile(p, []byte(" 07"+strings.Repeat("00", 31)+" \n"), 0o600))
	k, _, err := loadIdentity(p)
	require.NoError(t, err)
	assert.True(t, ed25519.NewKeyFromSeed(seed).Equal(k))
}

// A read error is reported as such: --identity-file naming a directory
// gives the error of the read, not "no key line".
func TestIdentityFileReadError(t *testing.T) {
	dir := t.TempDir()
	_, _, err := loadIdentity(dir)
	require.Error(t, err)
	assert.ErrorContains(t, err, "--identity-file "+dir)
	assert.ErrorContains(t, err, "is a directory")
	assert.NotContains(t, err.Error(), "no key line")
}

// A command line refused for another flag creates no identity file: the
// file is loaded, or created, only once every other flag is valid.
func TestIdentityFileNotCreatedOnUsageError(t *testing.T) {
	for name, args := range map[string][]string{
		"no key":          {},
		"plain and key":   {"--plain", "--key", testKeyHex},
		"send-plain only": {"--key", testKeyHex, "--send-plain"},
	} {
		file := filepath.Join(t.TempDir(), "identity")
		var stdout, stderr bytes.Buffer
		err := runAgent(context.Background(), append(args, "--identity-file", file), &stdout, &stderr)
		require.Error(t, err, name)
		assert.NoFileExists(t, file, name)
	}
}
