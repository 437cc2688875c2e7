package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// regularWith is regularTrace(n) with heartbeat k's line replaced by its
// record arriving late later, and moved to after the last record that
// arrives no later than it (a receive log writes records as they arrive)
// when moved; else left in place.
func regularWith(n, k int, late time.Duration, moved bool) string {
	lines := strings.Split(strings.TrimSuffix(regularTrace(n), "\n"), "\n")
	s := int64(k) * int64(100*time.Millisecond)
	a := s + int64(10*time.Millisecond) + int64(late)
	rec := fmt.Sprintf("p %d %d %d", k, s, a)
	i := k + 2 // two header lines
	if !moved {
		lines[i] = rec
		return strings.Join(lines, "\n") + "\n"
	}
	lines = append(lines[:i], lines[i+1:]...)
	j := i
	for j < len(lines) && int64(k+j-i+1)*int64(100*time.Millisecond)+int64(10*time.Millisecond) <= a {
		j++
	}
	lines = append(lines[:j], append([]string{rec}, lines[j:]...)...)
	return strings.Join(lines, "\n") + "\n"
}

// A heartbeat 1 s late at Δ = 100 ms, overtaken by the ten sent after it,
// is replayed: no warning, every heartbeat counted, no loss, one stale
// (user48's F18: it was left out as "cannot be right" and the header said
// loss 0.03%).
func TestLateHeartbeatReplayed(t *testing.T) {
	text := regularWith(3000, 1500, time.Second, true)
	require.Contains(t, text, "p 1510 151000000000 151010000000\np 1500 150000000000 151010000000\np 1511 ")
	p := writeFile(t, "late.fdk", text)
	code, out, errOut := runCmd("-d", "chen", p)
	require.Equal(t, 0, code, errOut)
	assert.Empty(t, errOut)
	assert.Contains(t, out, "sender p ("+p+"): 3000 heartbeats over 4m59.9s, Δ = 100ms, loss 0.00%, 1 stale (1 reordered, 0 duplicates), warm-up")
}

// A record left out (its arrival one hour off, in place: nothing overtook
// it) was received: the header's loss does not count it, and says how
// many were left out; so does the report.
func TestLeftOutNotLoss(t *testing.T) {
	p := writeFile(t, "bad.fdk", regularWith(3000, 1500, time.Hour, false))
	report := filepath.Join(t.TempDir(), "r.html")
	code, out, errOut := runCmd("-d", "chen", "--report", report, p)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, errOut, "left out 1 record(s) that cannot be right (1 arrival)")
	assert.Contains(t, errOut, p+":1503: sender \"p\": arrival")
	assert.Contains(t, out, "sender p ("+p+"): 2999 heartbeats over 4m59.9s, Δ = 100ms, loss 0.00%, 1 left out by the input check, warm-up")
	html, err := os.ReadFile(report)
	require.NoError(t, err)
	assert.Contains(t, string(html), "0.00 % (0 of 3000 sequence numbers)")
	assert.Contains(t, string(html), "left out by the input check")
	assert.Contains(t, string(html), "1 record(s), received but not replayed: not counted as loss")

	// The same heartbeat lost: loss, and nothing left out.
	lost := strings.Replace(regularTrace(3000), "p 1500 150000000000 150010000000\n", "", 1)
	code, out, errOut = runCmd("-d", "chen", writeFile(t, "lost.fdk", lost))
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "2999 heartbeats over 4m59.9s, Δ = 100ms, loss 0.03%, warm-up")
}

// Each incarnation's section of the report lists the records the input
// check left out of it, and the restart that began it, and no other's
// (atk25's F5: p@1 and p@2 both listed both records and the restart).
// Sender p sends 3000 heartbeats at Δ = 100 ms and restarts its numbering
// after 1500; its heartbeats 500 (p@1) and 2200 (p@2) arrive an hour off,
// in place, as does q's 500 (q sends every 200 ms).
func TestRestartSectionsListTheirOwn(t *testing.T) {
	var b strings.Builder
	b.WriteString("#fdkit-trace version=1 interval=100ms unit=ns\nsender seq sent arrival\n")
	for k := range 3000 {
		s := int64(k) * int64(100*time.Millisecond)
		a, seq := s+int64(10*time.Millisecond), k
		if k >= 1500 {
			seq = k - 1500
		}
		if k == 500 || k == 2200 {
			a += int64(time.Hour)
		}
		fmt.Fprintf(&b, "p %d %d %d\n", seq, s, a)
		if k%2 == 0 {
			qa := s + int64(10*time.Millisecond)
			if k == 1000 {
				qa += int64(time.Hour)
			}
			fmt.Fprintf(&b, "q %d %d %d\n", k/2, s, qa)
		}
	}
	p := writeFile(t, "restart.fdk", b.String())
	report := filepath.Join(t.TempDir(), "r.html")
	code, out, errOut := runCmd("-d", "fixed", "--report", report, p)
	require.Equal(t, 0, code, errOut)
	for _, l := range []string{":753: sender \"p\": arrival", ":1504: sender \"q\": arrival", ":3303: sender \"p\": arrival", ":2253: sender \"p\": sequence restarts at 0"} {
		require.Contains(t, errOut, p+l)
	}
	assert.Contains(t, out, "sender p@1 ("+p+"): 1499 heartbeats")
	assert.Contains(t, out, "sender p@2 ("+p+"): 1499 heartbeats")
	page, err := os.ReadFile(report)
	require.NoError(t, err)
	warnings := map[string][]string{}
	for _, sec := range regexp.MustCompile(`(?s)<section id="s\d+">\s*<h2>restart\.fdk, sender ([^<]*)</h2>(.*?)</section>`).FindAllStringSubmatch(string(page), -1) {
		for _, w := range regexp.MustCompile(`<div class="warn">([^<]*)</div>`).FindAllStringSubmatch(sec[2], -1) {
			if i := strings.Index(w[1], ".fdk:"); i >= 0 {
				line, _, _ := strings.Cut(w[1][i+len(".fdk:"):], ":")
				warnings[sec[1]] = append(warnings[sec[1]], line)
			}
		}
	}
	assert.Equal(t, map[string][]string{"p@1": {"753"}, "p@2": {"3303", "2253"}, "q": {"1504"}}, warnings)
}

// A record left out for its sequence number was received too (atk25's
// F3): heartbeat 1500 written as 2^64 − 1, or as 15, a number received
// long before. Its true number is unknown, but it takes one of the
// missing numbers off the loss: loss 0.00 %, as for a record left out for
// its arrival, and no loss burst in the report.
func TestLeftOutForSeqNotLoss(t *testing.T) {
	for _, seq := range []string{"18446744073709551615", "15"} {
		text := strings.Replace(regularTrace(3000), "p 1500 150000000000 ", "p "+seq+" 150000000000 ", 1)
		p := writeFile(t, "seq.fdk", text)
		report := filepath.Join(t.TempDir(), "r.html")
		code, out, errOut := runCmd("-d", "chen", "--report", report, p)
		require.Equal(t, 0, code, errOut)
		assert.Contains(t, errOut, "left out 1 record(s) that cannot be right (1 seq)")
		assert.Contains(t, out, "sender p ("+p+"): 2999 heartbeats over 4m59.9s, Δ = 100ms, loss 0.00%, 1 left out by the input check, warm-up")
		html, err := os.ReadFile(report)
		require.NoError(t, err)
		assert.True(t, strings.Contains(string(html), "<dt>loss</dt><dd>0.00 % (0 of 3000 sequence numbers)</dd><dt>loss bursts</dt><dd>0, longest 0</dd>"), "the report's loss rows")
	}
}

// A late copy left out (its number received before) stands for no
// missing number (atk26's N1: it took one off the loss, so one copy hid
// one real loss). 1500 is lost; a copy of 50 arrives after 100 and a copy
// of 2000 after 2100: loss 0.03 % either way, 2 left out.
func TestCopyLeftOutNotTakenOffLoss(t *testing.T) {
	text := strings.Replace(regularTrace(3000), "p 1500 150000000000 150010000000\n", "", 1)
	text = strings.Replace(text, "p 100 10000000000 10010000000\n", "p 100 10000000000 10010000000\np 50 5000000000 10015000000\n", 1)
	text = strings.Replace(text, "p 2100 210000000000 210010000000\n", "p 2100 210000000000 210010000000\np 2000 200000000000 210015000000\n", 1)
	p := writeFile(t, "copy.fdk", text)
	code, out, errOut := runCmd("-d", "chen", p)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, errOut, "left out 2 record(s) that cannot be right (2 seq)")
	assert.Contains(t, errOut, p+":104: sender \"p\": sequence number 50 is 50 below the highest so far, 100, and was received before")
	assert.Contains(t, out, "sender p ("+p+"): 2999 heartbeats over 4m59.9s, Δ = 100ms, loss 0.03%, 2 left out by the input check, warm-up")
}

// A late heartbeat of the incarnation before a restart, left out, counts
// in its own incarnation (atk26's N2: it was lost in p@1, and p@2 listed
// it as its own and lost its real loss). p sends 3000 heartbeats at Δ =
// 100 ms and restarts its numbering after 1500; 1498 arrives 500 ms late,
// after the new incarnation's 0 to 2 (line 1505), and the new incarnation's 50 is
// lost.
func TestOldIncarnationLeftOutInItsOwn(t *testing.T) {
	var b strings.Builder
	b.WriteString("#fdkit-trace version=1 interval=100ms unit=ns\nsender seq sent arrival\n")
	var late string
	for k := range 3000 {
		s := int64(k) * int64(100*time.Millisecond)
		line := fmt.Sprintf("p %d %d %d\n", k%1500, s, s+int64(10*time.Millisecond))
		switch k {
		case 1498:
			late = fmt.Sprintf("p %d %d %d\n", k, s, s+int64(510*time.Millisecond))
			continue
		case 1550:
			continue
		}
		b.WriteString(line)
		if k == 1502 {
			b.WriteString(late)
		}
	}
	p := writeFile(t, "late.fdk", b.String())
	report := filepath.Join(t.TempDir(), "r.html")
	code, out, errOut := runCmd("-d", "fixed", "--report", report, p)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, errOut, p+":1505: sender \"p\": sequence number 1498, sent 200ms before the restart of epoch 2, is a late heartbeat of the incarnation before (epoch 1): left out")
	assert.Contains(t, out, "sender p@1 ("+p+"): 1499 heartbeats over 2m29.9s, Δ = 100ms, loss 0.00%, 1 left out by the input check, warm-up")
	assert.Contains(t, out, "sender p@2 ("+p+"): 1499 heartbeats over 2m29.9s, Δ = 100ms, loss 0.07%, warm-up")
	page, err := os.ReadFile(report)
	require.NoError(t, err)
	secs := regexp.MustCompile(`(?s)<section id="s\d+">\s*<h2>late\.fdk, sender ([^<]*)</h2>(.*?)</section>`).FindAllStringSubmatch(string(page), -1)
	require.Len(t, secs, 2)
	assert.Equal(t, "p@1", secs[0][1])
	assert.Contains(t, secs[0][2], "late.fdk:1505: sender")
	assert.Contains(t, secs[0][2], "0.00 % (0 of 1500 sequence numbers)")
	assert.NotContains(t, secs[1][2], "late.fdk:1505")
	assert.Contains(t, secs[1][2], "0.07 % (1 of 1500 sequence numbers)")
}
