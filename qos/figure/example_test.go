package figure_test

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/qos"
	"github.com/fdkit/fdkit/qos/figure"
	"github.com/fdkit/fdkit/trace"
)

// Fixed timeouts swept over a generated minute (Δ = 100 ms, 5 % loss),
// drawn as MR and 1 − QAP against TD.
func ExampleSave() {
	recs, err := trace.Generate(trace.GenConfig{Loss: trace.Loss{Model: trace.LossBernoulli, P: 0.05}}, trace.NewRand(1))
	if err != nil {
		panic(err)
	}
	hbs := make([]detector.Heartbeat, len(recs))
	for i, r := range recs {
		hbs[i] = r.Heartbeat()
	}
	timeouts := []time.Duration{110 * time.Millisecond, 150 * time.Millisecond, 250 * time.Millisecond}
	curves, err := qos.Sweep([]qos.Stream{{Name: "p", Heartbeats: hbs}}, []qos.Family{qos.FixedFamily(timeouts)}, qos.SweepConfig{})
	if err != nil {
		panic(err)
	}
	dir, err := os.MkdirTemp("", "figure")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	files, err := figure.Save(curves, dir, "p-", "generated, sender p")
	if err != nil {
		panic(err)
	}
	for _, f := range files {
		fmt.Println(filepath.Base(f))
	}
	// Output:
	// p-mr-td.png
	// p-mr-td.svg
	// p-mr-td.pdf
	// p-qap-td.png
	// p-qap-td.svg
	// p-qap-td.pdf
}
