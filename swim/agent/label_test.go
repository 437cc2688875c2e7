package agent

import (
	"context"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
	"github.com/fdkit/fdkit/swim/transport"
	"github.com/fdkit/fdkit/swim/wire"
)

// Members sharing a label form a group; a member with another label, or
// none, is never admitted, and each of its packets is counted as a label
// mismatch, not as an authentication failure, on datagrams and on the
// stream path alike.
func TestClusterLabel(t *testing.T) {
	as := group(t, 3, Config{Label: "dc1"})
	seed := as[0]
	for _, label := range []string{"dc2", ""} {
		other := start(t, Config{Label: label})
		before := seed.Stats().LabelMismatches
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		err := other.Join(ctx, seed.Self().Addr)
		cancel()
		var je *JoinError
		require.ErrorAs(t, err, &je, "label %q", label)
		assert.Greater(t, seed.Stats().LabelMismatches, before, "label %q", label)
		assert.Zero(t, seed.Stats().AuthFailures, "label %q: counted as an authentication failure", label)
		assert.Equal(t, 3, aliveOrSuspect(seed))
		require.NoError(t, other.Shutdown()) // its join retries would count below
	}
	// The stream path: a ping sealed with the group's key under another
	// label is cut unanswered and counted.
	c, b := otherClusterStream(t, seed)
	defer c.Close()
	time.Sleep(100 * time.Millisecond) // the shut-down members' last datagrams arrive
	before := seed.Stats().LabelMismatches
	require.NoError(t, c.WriteFrame(b))
	_, err := c.ReadFrame()
	assert.Error(t, err, "a frame of another label was answered")
	require.Eventually(t, func() bool { return seed.Stats().LabelMismatches == before+1 }, 3*time.Second, 10*time.Millisecond)
	assert.Zero(t, seed.Stats().StreamAuthFailures)

	_, err = Start(context.Background(), Config{Plain: true, Label: string(make([]byte, 256))})
	assert.ErrorContains(t, err, "Label is 256 bytes, at most 255")
}

// Turning encryption on in a running group, memberlist's three stages:
// (1) members with the key that send plain and accept both, alongside a
// member still plain; (2) sealing on everywhere; (3) plain refused. The
// group stays whole at every stage, and a member with another key is
// refused even while plain packets are accepted.
func TestEncryptionTurnedOnWhileRunning(t *testing.T) {
	stage1 := Config{Keys: [][]byte{testKey}, AcceptPlain: true, SendPlain: true}
	old := start(t, Config{Plain: true})
	ks := group(t, 3, stage1)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, old.Join(ctx, ks[0].Self().Addr))
	require.Eventually(t, func() bool { return alive(old) == 4 && alive(ks[0]) == 4 }, 10*time.Second, 10*time.Millisecond,
		"stage 1: the plain member and the members with the key did not form one group")
	require.NoError(t, old.Shutdown()) // restarted with the key: here, it leaves the test

	// A member with another key, during the migration: refused.
	intruder := start(t, Config{Keys: [][]byte{[]byte("another-key-0123456789ab")}, AcceptPlain: true})
	short, stop := context.WithTimeout(ctx, 500*time.Millisecond)
	assert.Error(t, intruder.Join(short, ks[0].Self().Addr), "a member with another key was admitted during the migration")
	stop()
	assert.NotZero(t, ks[0].Stats().AuthFailures)

	for _, a := range ks {
		require.NoError(t, a.SetSendPlain(false))
	}
	// Stage 2: every member seals; plain packets stop arriving. Those sent
	// plain before the switch are read within milliseconds, or a loaded
	// machine's stall later; a member still sending plain would send some
	// every period (100 ms), so a second without one tells them apart.
	plain := plainDrained(t, ks)
	for i := range ks {
		assert.NotZero(t, plain[i], "member %d never counted a plain packet in stage 1", i)
	}
	for _, a := range ks {
		require.NoError(t, a.SetAcceptPlain(false))
	}
	// Stage 3: sealed only; the group is whole and a plain member is refused.
	before := ks[0].Stats().PacketsReceived
	require.Eventually(t, func() bool { return ks[0].Stats().PacketsReceived > before+5 }, 5*time.Second, 10*time.Millisecond)
	for _, a := range ks {
		for _, m := range a.Members() {
			if m.Node.ID != old.Self().ID {
				assert.Contains(t, []swim.State{swim.StateAlive, swim.StateSuspect}, m.State, "%s at %s", m.Node.ID, a.Self().ID)
			}
		}
	}
	auth := ks[0].Stats().AuthFailures
	late := start(t, Config{Plain: true})
	short, stop = context.WithTimeout(ctx, 500*time.Millisecond)
	defer stop()
	assert.Error(t, late.Join(short, ks[0].Self().Addr), "a plain member was admitted after stage 3")
	assert.Greater(t, ks[0].Stats().AuthFailures, auth)

	plainAgent := start(t, Config{Plain: true})
	assert.ErrorIs(t, plainAgent.SetSendPlain(false), ErrNoKeys)
	assert.ErrorIs(t, plainAgent.SetAcceptPlain(false), ErrNoKeys)
	_, err := Start(context.Background(), Config{Plain: true, AcceptPlain: true})
	assert.ErrorContains(t, err, "need Keys")
}

// plainDrained waits until none of as has accepted a plain packet for a
// whole second, for at most 30 s, and returns their PlainAccepted counts.
func plainDrained(t *testing.T, as []*Agent) []uint64 {
	t.Helper()
	counts := func() []uint64 {
		var c []uint64
		for _, a := range as {
			c = append(c, a.Stats().PlainAccepted)
		}
		return c
	}
	last, since := counts(), time.Now()
	require.Eventually(t, func() bool {
		if c := counts(); !slices.Equal(c, last) {
			last, since = c, time.Now()
		}
		return time.Since(since) >= time.Second
	}, 30*time.Second, 50*time.Millisecond, "plain packets still arrive after every member seals")
	return last
}

// Sending plain while refusing plain cuts a member off from every member
// in the same stage: turning encryption on runs AcceptPlain before
// SendPlain's end, and turning it off AcceptPlain before SendPlain's
// start. Start and the setters refuse the stage where SendPlain is on and
// AcceptPlain off, naming both.
func TestSendPlainNeedsAcceptPlain(t *testing.T) {
	_, err := Start(context.Background(), Config{Keys: [][]byte{testKey}, SendPlain: true})
	require.Error(t, err)
	assert.ErrorContains(t, err, "SendPlain")
	assert.ErrorContains(t, err, "AcceptPlain")

	a := start(t, Config{AcceptPlain: true, SendPlain: true})
	err = a.SetAcceptPlain(false)
	require.Error(t, err, "refusing plain while sending plain")
	assert.ErrorContains(t, err, "SetSendPlain(false)")
	assert.True(t, a.sec.AcceptPlain(), "a refused SetAcceptPlain changed the setting")
	require.NoError(t, a.SetSendPlain(false))
	require.NoError(t, a.SetAcceptPlain(false))
	err = a.SetSendPlain(true)
	require.Error(t, err, "sending plain while refusing plain")
	assert.ErrorContains(t, err, "SetAcceptPlain(true)")
	assert.False(t, a.sec.SendPlain())
	require.NoError(t, a.SetAcceptPlain(true), "turning encryption off, first stage")
	require.NoError(t, a.SetSendPlain(true), "turning encryption off, second stage")

	plain := start(t, Config{Plain: true})
	assert.ErrorIs(t, plain.SetSendPlain(true), ErrNoKeys)
	assert.ErrorIs(t, plain.SetAcceptPlain(false), ErrNoKeys)
}

// labelStripper is a Transport that checks and strips the cluster label
// label in front of the agent, as a gateway's transport does for a member
// with SkipInboundLabelCheck: datagrams with that label lose it, others
// pass unchanged.
type labelStripper struct {
	transport.Transport
	out chan transport.Packet
}

func stripLabels(t *testing.T, label string) *labelStripper {
	u, err := listenUDP(transport.Config{})
	require.NoError(t, err)
	s := &labelStripper{Transport: u, out: make(chan transport.Packet, 64)}
	go func() {
		defer close(s.out)
		for p := range u.Packets() {
			if d := p.Data; len(d) > 2 && d[0] == wire.EnvelopeLabel && len(d) > 2+int(d[1]) && string(d[2:2+int(d[1])]) == label {
				p.Data = d[2+int(d[1]):]
			}
			s.out <- p
		}
	}()
	return s
}

func (s *labelStripper) Packets() <-chan transport.Packet { return s.out }

// A member whose transport strips the label (SkipInboundLabelCheck) joins
// and stays in a labelled group over real sockets; a packet that reaches
// it still labelled (another group's, which its transport let through) is
// dropped and counted.
func TestSkipInboundLabelCheckOverSockets(t *testing.T) {
	a := start(t, Config{Label: "dc1"})
	b := start(t, Config{Label: "dc1", SkipInboundLabelCheck: true, Transport: stripLabels(t, "dc1"), DisableStream: true})
	join(t, b, a)
	require.Eventually(t, func() bool { return alive(a) == 2 && alive(b) == 2 }, 5*time.Second, 20*time.Millisecond)
	time.Sleep(500 * time.Millisecond) // five periods of probes both ways
	assert.Equal(t, 2, aliveOrSuspect(a))
	assert.Equal(t, 2, aliveOrSuspect(b))
	assert.Zero(t, b.Stats().LabelMismatches)
	assert.Zero(t, b.Stats().AuthFailures)

	other := start(t, Config{Label: "dc2"})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	var je *JoinError
	require.ErrorAs(t, other.Join(ctx, b.Self().Addr), &je)
	// other's join ends at its deadline, not when b has dropped the
	// datagram: on a loaded machine b's goroutines may not have taken it
	// yet (seen once under -race at load 5).
	assert.Eventually(t, func() bool { return b.Stats().LabelMismatches > 0 }, 5*time.Second, 10*time.Millisecond,
		"the dc2 join counted as a label mismatch")
	assert.Equal(t, 2, aliveOrSuspect(b))
}

// Start refuses SkipInboundLabelCheck where nothing strips the labels the
// group's packets carry: with the built-in UDP transport every labelled
// datagram, and with the built-in stream every labelled frame, would be
// dropped, isolating the member while it looks started.
func TestSkipInboundLabelCheckNeedsAStrippingTransport(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  Config
	}{
		{"built-in UDP", Config{}},
		{"built-in stream", Config{Transport: stripLabels(t, "dc1")}},
	} {
		if c.cfg.Transport != nil {
			defer c.cfg.Transport.Close()
		}
		c.cfg.Plain, c.cfg.Label, c.cfg.SkipInboundLabelCheck, c.cfg.Protocol = true, "dc1", true, fast()
		a, err := Start(t.Context(), c.cfg)
		if err == nil {
			_ = a.Shutdown()
		}
		assert.ErrorContains(t, err, "SkipInboundLabelCheck", c.name)
	}
}

// otherClusterStream dials a stream to a and returns it with a ping
// sealed with the group's key (mustKeyring) under another cluster label,
// "dc2", for the caller to write.
func otherClusterStream(t *testing.T, a *Agent) (*transport.Conn, []byte) {
	t.Helper()
	wrong, err := wire.NewCodec(wire.CodecConfig{Security: &wire.Security{Keyring: mustKeyring(t), Label: "dc2"}})
	require.NoError(t, err)
	b, _, err := wrong.Encode(&swim.Packet{Kind: swim.MsgPing, From: swim.Node{ID: "p", Addr: "127.0.0.1:9"}, To: a.Self(), Ping: swim.Ping{Seq: 1}})
	require.NoError(t, err)
	c, err := transport.DialStream(context.Background(), netip.MustParseAddrPort(a.Self().Addr), transport.StreamConfig{Timeout: 3 * time.Second})
	require.NoError(t, err)
	return c, b
}
