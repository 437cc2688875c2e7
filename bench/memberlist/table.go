package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
)

// Row is one line of the table: one library's runs of one scenario.
// False positives are summed over runs; every other column is a
// distribution over runs, printed as its median and 90th percentile
// (times) or its median and range (rates).
type Row struct {
	Lib, Scenario string
	Runs          int
	FP, FPMinus   int
	// FPMembers sums Result.FPMembers over runs: false declarations
	// counted once per member declared, whoever declared it.
	FPMembers int
	// Join is the time from the first member's start until every member
	// sees all N, in seconds.
	Join quant
	// JoinBytes is what the members sent while the group formed, in
	// bytes per member.
	JoinBytes quant
	// First and Full are the times from the kill to the first and to the
	// last live member declaring the killed one dead, in seconds; Full
	// over the Detected runs in which every live member did.
	First, Full quant
	Detected    int
	// Msg and Bytes are what each unimpaired member sent per second, CPU
	// the library's CPU in milliseconds per member per second.
	Msg, Bytes, CPU quant
}

// quant summarizes a sample: its size, median, 90th percentile (nearest
// rank), smallest and largest value.
type quant struct {
	N                  int
	Med, P90, Min, Max float64
}

// quantOf returns the summary of xs (N 0 for none).
func quantOf(xs []float64) quant {
	if len(xs) == 0 {
		return quant{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	med := s[n/2]
	if n%2 == 0 {
		med = (s[n/2-1] + s[n/2]) / 2
	}
	return quant{N: n, Med: med, P90: s[int(math.Ceil(0.9*float64(n)))-1], Min: s[0], Max: s[n-1]}
}

// aggregate makes the table's row of one library's runs of a scenario.
func aggregate(rs []Result) Row {
	a := Row{Lib: rs[0].Lib, Scenario: rs[0].Scenario, Runs: len(rs)}
	var join, joinBytes, first, full, msg, bytes, cpu []float64
	for _, r := range rs {
		a.FP += r.FP
		a.FPMinus += r.FPMinus
		a.FPMembers += r.FPMembers
		join = append(join, r.Converge.Seconds())
		joinBytes = append(joinBytes, r.JoinBytes)
		msg, bytes, cpu = append(msg, r.MsgRate), append(bytes, r.ByteRt), append(cpu, r.CPU)
		if r.First >= 0 {
			first = append(first, r.First.Seconds())
		}
		if r.Full >= 0 {
			full = append(full, r.Full.Seconds())
			a.Detected++
		}
	}
	a.Join, a.JoinBytes, a.First, a.Full = quantOf(join), quantOf(joinBytes), quantOf(first), quantOf(full)
	a.Msg, a.Bytes, a.CPU = quantOf(msg), quantOf(bytes), quantOf(cpu)
	return a
}

// printTable prints rows as a Markdown table.
func printTable(w io.Writer, rows []Row, o options) {
	fmt.Fprintln(w, "| N | scenario | library | runs | join s: median (p90, max) | join KB/member: median (range) | FP | FP- | FP members | first detection s: median (p90) | full dissemination s: median (p90) | msg/member/s | bytes/member/s: median (range) | CPU ms/member/s: median (range) |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, r := range rows {
		first, full := "", ""
		if timed(r.Scenario) {
			first, full = medP90(r.First), medP90(r.Full)
			if r.Detected < r.Runs {
				full = fmt.Sprintf("%s (%d/%d runs complete)", full, r.Detected, r.Runs)
			}
		}
		fmt.Fprintf(w, "| %d | %s | %s | %d | %.2f (%.2f, %.2f) | %.1f (%.1f–%.1f) | %d | %d | %d | %s | %s | %.2f | %.0f (%.0f–%.0f) | %.2f (%.2f–%.2f) |\n",
			o.n, r.Scenario, r.Lib, r.Runs, r.Join.Med, r.Join.P90, r.Join.Max,
			r.JoinBytes.Med/1000, r.JoinBytes.Min/1000, r.JoinBytes.Max/1000, r.FP, r.FPMinus, r.FPMembers, first, full,
			r.Msg.Med, r.Bytes.Med, r.Bytes.Min, r.Bytes.Max, r.CPU.Med, r.CPU.Min, r.CPU.Max)
	}
}

func medP90(q quant) string {
	if q.N == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f (%.2f)", q.Med, q.P90)
}

// printWins prints a line for each row and column where memberlist does
// better than an fdkit library in the same scenario: a shorter join or
// fewer bytes sent while joining, first detection or full dissemination, by median or by 90th percentile
// (a library's tail is part of what its users meet), fewer false
// positives, fewer messages or bytes, or less CPU (medians). With no
// such row it says so.
func printWins(w io.Writer, rows []Row, o options) {
	var lines []string
	for _, ml := range rows {
		if ml.Lib != "memberlist" {
			continue
		}
		for _, fd := range rows {
			if fd.Scenario != ml.Scenario || !strings.HasPrefix(fd.Lib, "fdkit") {
				continue
			}
			win := func(what string, m, f float64, unit string) {
				// Compared as printed (two decimals), so that no line
				// says 7.66 against 7.66.
				if math.Round(m*100) < math.Round(f*100) {
					lines = append(lines, fmt.Sprintf("memberlist wins: N = %d, %s, %s: %.2f%s against %s's %.2f%s", o.n, ml.Scenario, what, m, unit, fd.Lib, f, unit))
				}
			}
			win("join (median)", ml.Join.Med, fd.Join.Med, " s")
			win("join (p90)", ml.Join.P90, fd.Join.P90, " s")
			win("join KB/member (median)", ml.JoinBytes.Med/1000, fd.JoinBytes.Med/1000, "")
			if timed(ml.Scenario) && ml.First.N > 0 && fd.First.N > 0 {
				win("first detection (median)", ml.First.Med, fd.First.Med, " s")
				win("first detection (p90)", ml.First.P90, fd.First.P90, " s")
			}
			if timed(ml.Scenario) && ml.Full.N > 0 && fd.Full.N > 0 {
				win("full dissemination (median)", ml.Full.Med, fd.Full.Med, " s")
				win("full dissemination (p90)", ml.Full.P90, fd.Full.P90, " s")
			}
			if timed(ml.Scenario) && ml.Detected > fd.Detected {
				lines = append(lines, fmt.Sprintf("memberlist wins: N = %d, %s, runs with full dissemination: %d against %s's %d", o.n, ml.Scenario, ml.Detected, fd.Lib, fd.Detected))
			}
			win("false positives", float64(ml.FP), float64(fd.FP), "")
			win("msg/member/s (median)", ml.Msg.Med, fd.Msg.Med, "")
			win("bytes/member/s (median)", ml.Bytes.Med, fd.Bytes.Med, "")
			win("CPU ms/member/s (median)", ml.CPU.Med, fd.CPU.Med, "")
		}
	}
	fmt.Fprintln(w)
	if len(lines) == 0 {
		fmt.Fprintln(w, "memberlist wins no row.")
		return
	}
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
}
