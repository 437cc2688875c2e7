package wire

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestReloadFileKeepsKeysOnError(t *testing.T) {
	dir := t.TempDir()
	k1, k2 := strings.Repeat("11", 16), strings.Repeat("22", 32)
	kr, err := NewKeyring(mustKey(t, k1))
	require.NoError(t, err)

	good := filepath.Join(dir, "keys")
	require.NoError(t, os.WriteFile(good, []byte("# rotation\n"+k2+"\n\n"+k1+"\n"), 0o600))
	n, err := kr.ReloadFile(good)
	require.NoError(t, err)
	require.Equal(t, 2, n)
	require.Equal(t, mustKey(t, k2), kr.Keys()[0], "the first key of the file is the primary")

	for name, body := range map[string]string{"empty": "", "bad hex": "zz\n", "short": "1122\n"} {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
		_, err := kr.ReloadFile(p)
		require.Error(t, err, name)
		require.Contains(t, err.Error(), p, "%s: the error names the file", name)
		require.Equal(t, mustKey(t, k2), kr.Keys()[0], "%s: the keys stay", name)
	}
	_, err = kr.ReloadFile(filepath.Join(dir, "missing"))
	require.Error(t, err)
	require.Equal(t, mustKey(t, k2), kr.Keys()[0])
}

func mustKey(t *testing.T, hex string) []byte {
	t.Helper()
	k, err := ParseKey(hex)
	require.NoError(t, err)
	return k
}
