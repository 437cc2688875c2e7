package qos

import (
	"os/exec"
	"strings"
	"testing"
)

// qos computes; drawing and the HTML page live in qos/figure and
// qos/report, so a program that only replays does not link the plotting
// stack or a template engine.
func TestNoDrawingDependencies(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Skipf("go list unavailable: %v: %s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "gonum.org/v1/plot") || dep == "html/template" || dep == "text/template" {
			t.Errorf("qos depends on %s", dep)
		}
	}
}
