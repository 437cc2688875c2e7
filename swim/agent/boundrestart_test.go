package agent

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim/transport"
)

// A rolling restart of a member, same ID and address (the default ID is
// the address), into a build or a configuration that does not read
// packets bound to it: fdkit before wire.EnvelopeBound, or WireVersion 1,
// which opens no bound packet. Under the first design of bound packets
// (48f3cae) the other members had learnt from its earlier life that it
// read bound packets (packet tag 8) and kept binding their packets to it
// until it sent them a sealed packet without tag 8: it could not open
// them (AuthFailures, and a Warn line that blamed the key), did not answer
// their pings, and they suspected it (atk29 F1). During the encryption
// migration (AcceptPlain and SendPlain), a member that came back sending
// plain never sent a sealed packet, so the others never learnt, and it
// heard none of them: it was cut off for good. Since 7a4557a only the ack
// to a ping that asks for it is bound: nothing is learnt about a peer.
func TestBoundRestartIntoOlderBuild(t *testing.T) {
	t.Run("sealed", func(t *testing.T) { boundRestart(t, Config{}, Config{WireVersion: 1}) })
	t.Run("sending plain", func(t *testing.T) {
		boundRestart(t, Config{AcceptPlain: true}, Config{WireVersion: 1, AcceptPlain: true, SendPlain: true})
	})
}

func boundRestart(t *testing.T, cfg, restart Config) {
	const n = 5
	as := group(t, n, cfg)
	periodsFrom(t, as...)(2 * n)
	victim := as[n-1]
	id, addr := victim.Self().ID, victim.Self().Addr
	susp := 0
	for _, a := range as[:n-1] {
		susp += a.Stats().Protocol.Suspicions
	}
	require.NoError(t, victim.tr.Close())
	<-victim.Done()
	u, err := transport.Listen(transport.Config{Bind: addr, QueueLen: 4096})
	require.NoError(t, err)
	var mu sync.Mutex
	envs := map[byte]int{}
	w := &envelopeCounter{UDP: u, out: make(chan transport.Packet, 4096)}
	go func() {
		defer close(w.out)
		for p := range u.Packets() {
			mu.Lock()
			envs[p.Data[0]]++
			mu.Unlock()
			w.out <- p
		}
	}()
	restart.ID, restart.Transport, restart.DisableStream, restart.Seed = id, w, true, 7
	back := start(t, restart)
	// Back before it joins, as a member whose seeds take a moment to
	// resolve; it answers pings meanwhile.
	periodsFrom(t, as[:n-1]...)(n)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	assert.NoError(t, back.Join(ctx, as[0].Self().Addr), "the restarted member rejoins")
	periodsFrom(t, as[:n-1]...)(3 * n)
	after := 0
	for _, a := range as[:n-1] {
		after += a.Stats().Protocol.Suspicions
	}
	st := back.Stats()
	mu.Lock()
	t.Logf("restarted member: datagrams by envelope byte %v, %d failed to open, %d refutations, holds %d alive; suspicions raised by the others: %d",
		envs, st.AuthFailures, st.Protocol.Refutations, alive(back), after-susp)
	mu.Unlock()
	assert.Zero(t, st.AuthFailures, "the restarted member got packets it cannot open")
	assert.Zero(t, after-susp, "the others suspected the restarted member")
	assert.Equal(t, n, alive(back), "the restarted member holds every member alive")
}

// envelopeCounter is a UDP socket whose inbound datagrams pass through out.
type envelopeCounter struct {
	*transport.UDP
	out chan transport.Packet
}

func (c *envelopeCounter) Packets() <-chan transport.Packet { return c.out }
