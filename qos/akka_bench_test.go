package qos

import (
	"testing"
)

// BenchmarkAkkaTD is the TD summary of the grouped Akka pass (the part
// after the pass itself) for 40 thresholds over one million heartbeats.
//
//	go test -run '^$' -bench 'AkkaTD' ./qos/
func BenchmarkAkkaTD(b *testing.B) {
	f := otherBenchFamilies()[0]
	hbs := benchTrace()[0].Heartbeats
	p, _, err := newGroupPass(akkaGroups(phiAkkaBenchConfig), f.Values, Config{})
	if err != nil {
		b.Fatal(err)
	}
	for _, hb := range hbs {
		if err := p.step(hb); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := p.finish(); err != nil {
			b.Fatal(err)
		}
	}
}
