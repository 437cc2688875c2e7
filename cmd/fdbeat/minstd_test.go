package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// recv's φ detectors have a σ floor of --interval/10 unless --phi-min-std
// says otherwise (0: the phi package's μ/100); the start line says which.
func TestRecvDefaultPhiFloor(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "phi_min_std=10ms"},
		{[]string{"--interval", "50ms"}, "phi_min_std=5ms"},
		{[]string{"--phi-min-std", "0"}, "phi_min_std=0s"},
		{[]string{"--interval", "1s", "--phi-min-std", "3ms"}, "phi_min_std=3ms"},
	} {
		args := append([]string{"recv", "--listen", "127.0.0.1:0", "--refresh", "0"}, c.args...)
		_, log := startMain(t, "receiving heartbeats", args...)
		assert.Contains(t, log.String(), c.want, "%v", c.args)
	}
}
