package main

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseMeta(t *testing.T) {
	b, err := parseMeta([]string{"zone=eu 1", "role=db", "empty=", "x=a=b"})
	require.NoError(t, err)
	assert.Equal(t, "empty=&role=db&x=a%3Db&zone=eu+1", string(b), "sorted URL query pairs")
	b, err = parseMeta(nil)
	require.NoError(t, err)
	assert.Nil(t, b)
	for in, want := range map[string]string{
		"novalue": `--meta "novalue": want key=value`,
		"=v":      `--meta "=v": the key is empty`,
	} {
		_, err := parseMeta([]string{in})
		assert.EqualError(t, err, want)
	}
	_, err = parseMeta([]string{"a=1", "a=2"})
	assert.EqualError(t, err, `--meta "a=2": key "a" given twice`)
	_, err = parseMeta([]string{"k=" + strings.Repeat("v", 511)})
	assert.ErrorContains(t, err, "--meta: 513 bytes once encoded")
	assert.ErrorContains(t, err, "at most 512")
	_, err = parseMeta([]string{"k=" + strings.Repeat("v", 510)})
	assert.NoError(t, err, "512 bytes")
}

// TestAgentMetaShown: --meta on one agent is shown by the other's
// /members (as sent and as pairs, with the wire-format range) and in its
// join event line; --meta with --wire-version 1 is refused.
func TestAgentMetaShown(t *testing.T) {
	a := startAgent(t, "a", "127.0.0.1:0", "--plain", "--meta", "zone=eu-1", "--meta", "role=db")
	b := startAgent(t, "b", "127.0.0.1:0", "--plain", "--join", a.addr)
	type entry struct {
		ID        string              `json:"id"`
		Meta      string              `json:"meta"`
		MetaPairs map[string][]string `json:"meta_pairs"`
		Versions  json.RawMessage     `json:"wire_versions"` // raw: a JSON array of numbers, not base64
	}
	var got entry
	require.Eventually(t, func() bool {
		c := http.Client{Timeout: 2 * time.Second}
		resp, err := c.Get("http://" + b.http + "/members")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		var es []entry
		if json.NewDecoder(resp.Body).Decode(&es) != nil {
			return false
		}
		for _, e := range es {
			if e.ID == "a" {
				got = e
				return true
			}
		}
		return false
	}, 20*time.Second, 50*time.Millisecond)
	assert.Equal(t, entry{ID: "a", Meta: "role=db&zone=eu-1", MetaPairs: map[string][]string{"role": {"db"}, "zone": {"eu-1"}}, Versions: json.RawMessage(`[1,2]`)}, got)
	require.Eventually(t, func() bool {
		return strings.Contains(b.output(), `kind=join id=a`) && strings.Contains(b.output(), `meta="role=db&zone=eu-1"`)
	}, 10*time.Second, 50*time.Millisecond, "%s", b.output())

	var out, errb strings.Builder
	err := runAgent(context.Background(), []string{"--plain", "--bind", "127.0.0.1:0", "--meta", "a=b", "--wire-version", "1"}, &out, &errb)
	assert.ErrorContains(t, err, "--meta needs wire format 2")
	err = runAgent(context.Background(), []string{"--plain", "--bind", "127.0.0.1:0", "--wire-version", "3"}, &out, &errb)
	assert.ErrorContains(t, err, "--wire-version")
	err = runAgent(context.Background(), []string{"--plain", "--bind", "127.0.0.1:0", "--meta", "k=" + strings.Repeat("v", 600)}, &out, &errb)
	assert.ErrorContains(t, err, "at most 512")
}
