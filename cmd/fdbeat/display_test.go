package main

import (
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fdkit/fdkit/monitor"
	"github.com/mattn/go-runewidth"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// vterm is a terminal of cols × rows cells with its scrollback, enough of
// one to replay what recv writes: text (wide runes take two cells, a line
// wraps at the last column), '\r', '\n' (as a tty with onlcr), and the CSI
// sequences n A (up, not above the screen's top), J (erase to the end of
// the screen), H (home) and 2J (erase the screen, which does not go to the
// scrollback).
type vterm struct {
	cols, rows int
	lines      [][]rune // scrollback then screen
	cx, cy     int      // cursor; cy indexes lines
}

func newVTerm(cols, rows int) *vterm { return &vterm{cols: cols, rows: rows, lines: [][]rune{nil}} }

func (v *vterm) size() (int, int, bool) { return v.cols, v.rows, true }

func (v *vterm) top() int { return max(0, len(v.lines)-v.rows) }

func (v *vterm) down() {
	v.cx = 0
	v.cy++
	if v.cy == len(v.lines) {
		v.lines = append(v.lines, nil)
	}
}

func (v *vterm) put(r rune) {
	w := runewidth.RuneWidth(r)
	if v.cx+w > v.cols {
		v.down()
	}
	line := v.lines[v.cy]
	for len(line) < v.cx+w {
		line = append(line, ' ')
	}
	line[v.cx] = r
	if w == 2 {
		line[v.cx+1] = 0 // the right half of a wide rune
	}
	v.lines[v.cy] = line
	v.cx += w
}

func (v *vterm) Write(p []byte) (int, error) {
	s := []rune(string(p))
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\r':
			v.cx = 0
		case '\n':
			v.down()
		case '\x1b':
			j := i + 2
			for j < len(s) && (s[j] < '@' || s[j] > '~') {
				j++
			}
			if i+1 >= len(s) || s[i+1] != '[' || j >= len(s) {
				return 0, fmt.Errorf("vterm: bad escape %q", string(s[i:]))
			}
			param := string(s[i+2 : j])
			switch s[j] {
			case 'A':
				n, err := strconv.Atoi(param)
				if err != nil {
					return 0, err
				}
				v.cy = max(v.cy-n, v.top())
			case 'J':
				switch param {
				case "":
					v.lines[v.cy] = v.lines[v.cy][:min(v.cx, len(v.lines[v.cy]))]
					for k := v.cy + 1; k < len(v.lines); k++ {
						v.lines[k] = nil
					}
				case "2":
					for k := v.top(); k < len(v.lines); k++ {
						v.lines[k] = nil
					}
				default:
					return 0, fmt.Errorf("vterm: unknown J %q", param)
				}
			case 'H':
				v.cx, v.cy = 0, v.top()
			default:
				return 0, fmt.Errorf("vterm: unknown CSI %q", string(s[i:j+1]))
			}
			i = j
		default:
			v.put(s[i])
		}
	}
	return len(p), nil
}

// text returns the scrollback and the screen, one string per row, trailing
// blank rows left out.
func (v *vterm) text() []string {
	var out []string
	for _, l := range v.lines {
		out = append(out, strings.TrimRight(strings.ReplaceAll(string(l), "\x00", ""), " "))
	}
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return out
}

// rowsWith returns the indexes of the rows that contain s.
func rowsWith(rows []string, s string) []int {
	var idx []int
	for i, r := range rows {
		if strings.Contains(r, s) {
			idx = append(idx, i)
		}
	}
	return idx
}

// On a terminal, log lines and the redrawn table never overwrite each
// other: every log line stays in the terminal (screen or scrollback), in
// order, above the table; the table is on screen once, at the bottom; a
// line logged after the last redraw comes under the last table when recv
// stops. A redraw that cleared the screen (ESC[H ESC[2J) would wipe log
// lines written to the same terminal between redraws: with that drawing
// this test finds the first line logged gone.
func TestTerminalLogAboveTable(t *testing.T) {
	for _, c := range []struct {
		name       string
		cols, rows int
		senders    int
	}{
		{"fits", 120, 40, 2},
		{"wraps", 60, 60, 2},                // table lines of 90 cells take two rows each
		{"taller than screen", 120, 12, 10}, // the block is cut to the screen
	} {
		t.Run(c.name, func(t *testing.T) {
			vt := newVTerm(c.cols, c.rows)
			region := newLiveRegion(vt, nil, vt.size)
			log := slog.New(slog.NewTextHandler(region, &slog.HandlerOptions{ReplaceAttr: dropTime}))
			clk := &monitor.ManualClock{}
			m, err := monitor.New(monitor.Config{Clock: clk})
			require.NoError(t, err)
			r := &receiver{log: log, clock: clk, mons: []namedMon{{"timeout-1s", m}}, stats: recvStats{Transitions: map[string]int{}},
				cfg: recvConfig{Table: vt, Terminal: true, TableSenders: defaultTableSenders, display: region}}
			for i := range c.senders {
				require.NoError(t, m.Heartbeat("sender-"+strconv.Itoa(i), monitor.Beat{}))
			}
			for i := range 3 {
				clk.Set(clk.Now() + time.Second)
				r.printTable()
				log.Info("event", "n", i)
				if i == 1 {
					time.Sleep(3 * logDelay) // shown by the timer, not by a redraw
				}
			}
			r.printTable()
			log.Info("after the last redraw")
			region.Close()
			log.Info("after close")

			rows := vt.text()
			events := []int{}
			for i := range 3 {
				got := rowsWith(rows, fmt.Sprintf("msg=event n=%d", i))
				require.Len(t, got, 1, "log line %d once:\n%s", i, strings.Join(rows, "\n"))
				events = append(events, got[0])
			}
			assert.True(t, slices.IsSorted(events), "in order: %v", events)
			headers := rowsWith(rows, "fdbeat recv: ")
			require.Len(t, headers, 1, "one table:\n%s", strings.Join(rows, "\n"))
			assert.Contains(t, rows[headers[0]], "fdbeat recv: 3s", "the last table")
			assert.Greater(t, headers[0], events[2], "the table under the log")
			after := rowsWith(rows, "after the last redraw")
			require.Len(t, after, 1)
			assert.Greater(t, after[0], headers[0], "a line logged at the end comes under the table")
			assert.Equal(t, len(rows)-1, rowsWith(rows, "after close")[0])
			if c.senders == 10 {
				assert.Len(t, rowsWith(rows, "more line(s)"), 1)
			}
		})
	}
}

func dropTime(_ []string, a slog.Attr) slog.Attr {
	if a.Key == slog.TimeKey {
		return slog.Attr{}
	}
	return a
}

// physicalRows counts the rows a line takes once wrapped, wide runes as two
// cells.
func TestPhysicalRows(t *testing.T) {
	for _, c := range []struct {
		text string
		cols int
		want int
	}{
		{"", 80, 0},
		{"\n", 80, 1},
		{"abc\n", 80, 1},
		{strings.Repeat("a", 80) + "\n", 80, 1},
		{strings.Repeat("a", 81) + "\n", 80, 2},
		{strings.Repeat("中", 40) + "\n", 80, 1},
		{strings.Repeat("中", 41) + "\n", 80, 2},
		{"a\nb\n", 0, 2},
		{strings.Repeat("a", 200) + "\nb\n", 80, 4},
	} {
		assert.Equal(t, c.want, physicalRows([]byte(c.text), c.cols), "%q at %d", c.text, c.cols)
	}
}
