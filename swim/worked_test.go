package swim

import (
	"strings"
	"testing"
	"time"

	"github.com/fdkit/fdkit/internal/worked"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWorkedExamples recomputes the worked examples of docs/algorithms.md
// that rest on swim's unexported rules (the other examples are checked in
// package docs).
func TestWorkedExamples(t *testing.T) {
	tabs, err := worked.Read("../docs/algorithms.md")
	require.NoError(t, err)
	get := func(t *testing.T, name string) *worked.Table {
		tab := tabs[name]
		require.NotNil(t, tab, "docs/algorithms.md has no worked example %q", name)
		return tab
	}
	num := func(t *testing.T, tab *worked.Table, i int, col string) float64 {
		c, err := tab.Cell(i, col)
		require.NoError(t, err)
		v, _, err := worked.Number(c)
		require.NoError(t, err, "%s row %d column %q", tab.Name, i+1, col)
		return v
	}
	eq := func(t *testing.T, tab *worked.Table, i int, col string, got float64) {
		c, err := tab.Cell(i, col)
		require.NoError(t, err)
		assert.NoError(t, worked.Compare(c, got), "%s row %d column %q", tab.Name, i+1, col)
	}

	// docs/algorithms.md, “Lifeguard suspicion timeout”: n = 100,
	// ProbeInterval 1 s.
	t.Run("lifeguard-suspicion", func(t *testing.T) {
		tab := get(t, "lifeguard-suspicion")
		for i := range tab.Rows {
			minT := suspicionMin(int(num(t, tab, i, "α")), 100, time.Second)
			maxT := time.Duration(num(t, tab, i, "β")) * minT
			to := suspicionTimeout(minT, maxT, int(num(t, tab, i, "K")), int(num(t, tab, i, "C")))
			eq(t, tab, i, "timeout (s)", to.Seconds())
		}
	})

	// docs/algorithms.md, “SWIM dissemination”.
	t.Run("swim-retransmit", func(t *testing.T) {
		tab := get(t, "swim-retransmit")
		for i := range tab.Rows {
			eq(t, tab, i, "piggyback limit", float64(retransmitLimit(int(num(t, tab, i, "λ")), int(num(t, tab, i, "n")))))
		}
	})

	// docs/algorithms.md, “Lifeguard local health”: memberlist's defaults.
	t.Run("lifeguard-lhm", func(t *testing.T) {
		tab := get(t, "lifeguard-lhm")
		for i := range tab.Rows {
			m := newTest(t, "a", ModeLifeguard, nil, "b")
			m.adjustHealth(int(num(t, tab, i, "LHM")))
			eq(t, tab, i, "LHM", float64(m.health.multiplier))
			eq(t, tab, i, "protocol period (ms)", float64(m.period().Milliseconds()))
			pt, ok := m.ProbeTimeout("b")
			require.True(t, ok)
			eq(t, tab, i, "probe timeout (ms)", float64(pt.Milliseconds()))
		}
		// The multiplier saturates at S − 1 = 7.
		m := newTest(t, "a", ModeLifeguard, nil, "b")
		m.adjustHealth(100)
		assert.Equal(t, DefaultMaxLocalHealthMultiplier-1, m.health.multiplier)
	})

	// docs/algorithms.md, “SWIM suspicion and incarnations”.
	t.Run("swim-precedence", func(t *testing.T) {
		tab := get(t, "swim-precedence")
		kinds := map[string]UpdateKind{"Alive": UpdateAlive, "Suspect": UpdateSuspect, "Dead": UpdateDead}
		states := map[string]State{"Alive": StateAlive, "Suspect": StateSuspect, "Dead": StateDead}
		parse := func(i int, col string) (string, Incarnation) {
			c, err := tab.Cell(i, col)
			require.NoError(t, err)
			f := strings.Fields(c)
			require.Len(t, f, 2, "%s row %d column %q: want \"Kind incarnation\"", tab.Name, i+1, col)
			v, _, err := worked.Number(f[1])
			require.NoError(t, err)
			return f[0], Incarnation(v)
		}
		for i := range tab.Rows {
			m := newTest(t, "a", ModeLifeguard, nil, "b", "c")
			k, inc := parse(i, "l's entry")
			m.apply(0, Update{Kind: UpdateAlive, Node: node("l"), Incarnation: inc, From: "l"}, false)
			if k != "Alive" {
				m.apply(0, Update{Kind: kinds[k], Node: node("l"), Incarnation: inc, From: "y"}, false)
			}
			require.Equal(t, states[k], m.State("l"), "row %d: setting up %s", i+1, k)
			uk, uinc := parse(i, "update")
			m.apply(time.Second, Update{Kind: kinds[uk], Node: node("l"), Incarnation: uinc, From: "x"}, true)
			rk, rinc := parse(i, "result")
			st, _ := m.Member("l", time.Second)
			assert.Equal(t, states[rk], st.State, "row %d", i+1)
			assert.Equal(t, rinc, st.Incarnation, "row %d", i+1)
		}
	})
	// docs/algorithms.md, “SWIM: hostile and stale updates”, plausible
	// incarnations: the bound MaxIncarnationJump, as a peer and as l itself.
	t.Run("swim-incarnation-jump", func(t *testing.T) {
		tab := get(t, "swim-incarnation-jump")
		require.NotEmpty(t, tab.Rows)
		cell := func(i int, col string) string {
			c, err := tab.Cell(i, col)
			require.NoError(t, err)
			return c
		}
		for i := range tab.Rows {
			inc := Incarnation(num(t, tab, i, "l's incarnation"))
			f := strings.Fields(cell(i, "update"))
			require.Len(t, f, 2)
			require.Equal(t, "Suspect", f[0])
			v, _, err := worked.Number(f[1])
			require.NoError(t, err)
			u := Update{Kind: UpdateSuspect, Node: node("l"), Incarnation: Incarnation(v), From: "x"}
			var m *Member
			switch who := cell(i, "heard by"); who {
			case "another member":
				m = newTest(t, "a", ModeLifeguard, nil, "b", "c")
				m.apply(0, Update{Kind: UpdateAlive, Node: node("l"), Incarnation: inc, From: "l"}, false)
			case "l itself":
				m = newTest(t, "l", ModeLifeguard, func(c *Config) { c.Incarnation = inc }, "b", "c")
			default:
				t.Fatalf("row %d: heard by %q", i+1, who)
			}
			before := m.Stats().Implausible
			m.apply(time.Second, u, true)
			refused := map[string]bool{"yes": true, "no": false}[cell(i, "refused")]
			assert.Equal(t, refused, m.Stats().Implausible == before+1, "row %d: refused", i+1)
			want := strings.Fields(cell(i, "l afterwards"))
			require.Len(t, want, 2)
			wv, _, err := worked.Number(want[1])
			require.NoError(t, err)
			if cell(i, "heard by") == "l itself" {
				assert.Equal(t, "Alive", want[0], "row %d: l itself is never suspect in its own view", i+1)
				assert.Equal(t, Incarnation(wv), m.Incarnation(), "row %d", i+1)
				continue
			}
			st, _ := m.Member("l", time.Second)
			states := map[string]State{"Alive": StateAlive, "Suspect": StateSuspect}
			assert.Equal(t, states[want[0]], st.State, "row %d", i+1)
			assert.Equal(t, Incarnation(wv), st.Incarnation, "row %d", i+1)
		}
	})
	// docs/algorithms.md, “SWIM probes and ping-req”: one period of b, whose
	// target does not answer and of whose three intermediates one nacks.
	t.Run("swim-probe", func(t *testing.T) {
		tab := get(t, "swim-probe")
		require.Len(t, tab.Rows, 4)
		b := newTest(t, "b", ModeLifeguard, nil, "a", "c", "d", "e", "f")
		sends := func(i int, pk []Packet) {
			c, err := tab.Cell(i, "b sends")
			require.NoError(t, err)
			if c == "–" {
				assert.Empty(t, pk, "row %d", i+1)
				return
			}
			f := strings.Fields(c)
			require.Len(t, f, 2)
			kinds := map[string]MessageKind{"ping": MsgPing, "ping-req": MsgPingReq}
			k, ok := kinds[f[1]]
			require.True(t, ok, f[1])
			assert.Len(t, pk, len(only(t, pk, k)), "row %d: only %s packets", i+1, f[1])
			eq(t, tab, i, "b sends", float64(len(pk)))
		}
		at := func(i int) time.Duration { return time.Duration(num(t, tab, i, "t (ms)")) * time.Millisecond }

		b.Tick(at(0))
		pk, _ := drain(b)
		sends(0, pk)
		eq(t, tab, 0, "b's LHM after", float64(b.LocalHealthMultiplier()))

		b.Tick(at(1))
		pk, _ = drain(b)
		sends(1, pk)
		reqs := only(t, pk, MsgPingReq)
		eq(t, tab, 1, "b's LHM after", float64(b.LocalHealthMultiplier()))

		nack := Packet{Kind: MsgNack, From: reqs[0].To, To: node("b"), Nack: Nack{Seq: reqs[0].PingReq.Seq}}
		require.NoError(t, b.Step(at(2), &nack))
		pk, _ = drain(b)
		sends(2, pk)
		eq(t, tab, 2, "b's LHM after", float64(b.LocalHealthMultiplier()))

		b.Tick(at(3))
		_, ev := drain(b)
		var suspects []Event
		for _, e := range ev {
			if e.Kind == EventSuspect {
				suspects = append(suspects, e)
			}
		}
		assert.Len(t, suspects, 1, "the target is suspected")
		eq(t, tab, 3, "b's LHM after", float64(b.LocalHealthMultiplier()))
	})
}
