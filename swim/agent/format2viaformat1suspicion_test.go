package agent

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/fdkit/fdkit/swim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// atk29b F3: a format-2 member joining through a seed that writes format
// 1 returns from Join at once, but the seed's datagram view, which cannot
// echo the join's token, vouches for nothing, so that its first probes of
// members it had heard too little from were silent (swim/receipt.go) and
// it suspected healthy members, who refuted. The answer to its join
// resent over a stream it dialled to the seed (which the seed now writes
// there even to a joiner it verified, for a join carrying a token) is
// the seed's own, which no blind forger can write: it vouches
// (swim.Member.StepJoinStreamAnswer), for the members the datagram view
// brought too. Here three such joiners in turn, in a group of 8 at a
// 400 ms period: in each of atk29b's three runs at 57b7a27 two of them
// suspected a member within 8 periods, and at 2451311 all three; with
// the stream answer but vouching only for members it makes live, 2, 0
// and 1.
func TestFormat2JoinViaFormat1SeedSuspects(t *testing.T) {
	proto := swim.Config{ProbeInterval: 400 * time.Millisecond, ProbeTimeout: 200 * time.Millisecond}
	const n = 8
	var as []*Agent
	for i := 0; i < n; i++ {
		c := Config{Plain: true, Protocol: proto, Seed: uint64(126000300 + i), ID: swim.ID(fmt.Sprintf("m%02d", i))}
		if i == 1 {
			c.WireVersion = 1 // the seed the joiners use
		}
		a := start(t, c)
		as = append(as, a)
		if i > 0 {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			require.NoError(t, a.Join(ctx, as[0].Self().Addr))
			cancel()
		}
	}
	require.Eventually(t, func() bool {
		for _, a := range as {
			if alive(a) != n {
				return false
			}
		}
		return true
	}, 20*time.Second, 20*time.Millisecond, "full view")
	var suspicions []uint64
	for k := 0; k < 3; k++ {
		c := Config{Plain: true, Protocol: proto, Seed: uint64(126000320 + k), ID: swim.ID(fmt.Sprintf("j%d", k))}
		j := start(t, c)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := j.Join(ctx, as[1].Self().Addr)
		cancel()
		require.NoError(t, err)
		time.Sleep(8 * proto.ProbeInterval)
		suspicions = append(suspicions, uint64(j.Stats().Protocol.Suspicions))
	}
	assert.Equal(t, []uint64{0, 0, 0}, suspicions, "suspicions by each format-2 joiner through the format-1 seed")
}
