package agent

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Start's errors about encryption name Config's fields (Keys, Plain),
// not the wire package's.
func TestStartErrorsNameKeysAndPlain(t *testing.T) {
	_, err := Start(context.Background(), Config{Plain: true, Keys: [][]byte{testKey}})
	require.Error(t, err)
	assert.ErrorContains(t, err, "Plain")
	assert.ErrorContains(t, err, "Keys")
	_, err = Start(context.Background(), Config{})
	require.Error(t, err)
	assert.ErrorContains(t, err, "Keys")
	assert.ErrorContains(t, err, "Plain")
}

// A Join that ends with its context because this member's MergeFilter
// refused the views that answered it says so, with the filter's error
// (memberlist's Join returns its MergeDelegate's error).
func TestJoinErrorNamesMergeRefusal(t *testing.T) {
	seed := start(t, Config{Plain: true, Protocol: fast()}) // no veto: it answers
	other := start(t, dcConfig("dc2"))
	ctx, cancel := context.WithTimeout(context.Background(), 700*time.Millisecond)
	defer cancel()
	err := other.Join(ctx, seed.Self().Addr)
	var je *JoinError
	require.ErrorAs(t, err, &je)
	require.Error(t, je.MergeRefusal)
	assert.ErrorContains(t, err, "MergeFilter")
	assert.ErrorContains(t, err, "not in datacenter dc2")
	assert.ErrorIs(t, err, context.DeadlineExceeded)
}
