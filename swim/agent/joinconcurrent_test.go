package agent

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Two Join calls at once, through addresses where no member runs: the
// first through X with a long wait, the second through Y with a short
// one. The second took X's place in the resends, and when it returned
// unanswered it stopped them all, though the first still waited: X got
// no join after it. Now the resends go to the addresses of every call
// still waiting, and a call that ends takes only its own away: X keeps
// getting joins, Y none.
func TestConcurrentJoinsKeepEachOthersSeeds(t *testing.T) {
	a := start(t, Config{})
	x, nx := deadAddress(t)
	y, ny := deadAddress(t)
	ctx1, cancel1 := context.WithTimeout(context.Background(), time.Minute)
	defer cancel1()
	first := make(chan error, 1)
	go func() { first <- a.Join(ctx1, x) }()
	require.Eventually(t, func() bool { return nx.Load() > 0 }, 10*time.Second, time.Millisecond, "the first Join knocks at X")

	ctx2, cancel2 := context.WithTimeout(context.Background(), 300*time.Millisecond)
	err := a.Join(ctx2, y)
	cancel2()
	var je *JoinError
	require.ErrorAs(t, err, &je, "the second Join: nothing answers at Y")
	require.Positive(t, ny.Load(), "the second Join knocked at Y")

	// A datagram may be in flight to Y as the second Join returns; then
	// the first Join's resends reach X again (one per ProbeInterval,
	// 100 ms) and Y no more.
	xAt, yAt := nx.Load(), ny.Load()
	require.Eventually(t, func() bool { return nx.Load() >= xAt+5 }, 20*time.Second, 5*time.Millisecond, "the first Join still knocks at X")
	assert.LessOrEqual(t, ny.Load(), yAt+1, "Y, whose Join returned, is not knocked at")
	select {
	case err := <-first:
		t.Fatalf("the first Join returned while it should wait: %v", err)
	default:
	}
	cancel1()
	require.True(t, errors.As(<-first, &je), "the first Join, cancelled")
}
