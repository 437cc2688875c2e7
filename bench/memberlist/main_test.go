package main

import (
	"testing"
	"time"
)

// The flags a run cannot use are refused before any member starts: a
// -probe-interval of 0 made the window's phase draw (rand Int64N) panic
// after the group had formed, -n 1 divided by zero choosing the victim,
// and -pause-every 0 made every pauser's loop spin for the whole window.
func TestOptionsCheck(t *testing.T) {
	good := options{n: 8, pausers: 1, runs: 3, window: 30 * time.Second, pause: 3 * time.Second,
		pauseEvery: 6 * time.Second, loss: 0.3, params: Params{ProbeInterval: time.Second}}
	if err := good.check(); err != nil {
		t.Fatalf("default-like options refused: %v", err)
	}
	for name, mut := range map[string]func(*options){
		"-n":              func(o *options) { o.n = 1 },
		"-probe-interval": func(o *options) { o.params.ProbeInterval = 0 },
		"-pausers":        func(o *options) { o.pausers = 8 },
		"-runs":           func(o *options) { o.runs = 0 },
		"-window":         func(o *options) { o.window = 0 },
		"-pause-every":    func(o *options) { o.pauseEvery = 0 },
		"-pause":          func(o *options) { o.pause = -time.Second },
		"-loss":           func(o *options) { o.loss = 1.5 },
	} {
		o := good
		mut(&o)
		err := o.check()
		if err == nil {
			t.Errorf("%s: accepted", name)
			continue
		}
		if got := err.Error(); len(got) < len(name) || got[:len(name)] != name {
			t.Errorf("%s: error %q does not name the flag first", name, got)
		}
	}
}
