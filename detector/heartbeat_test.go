package detector_test

import (
	"testing"
	"unsafe"

	"github.com/fdkit/fdkit/detector"
)

// A Heartbeat takes 32 bytes: the streams fdreplay holds in memory cost
// that much per heartbeat (with each flag after its value it took 40).
func TestHeartbeatSize(t *testing.T) {
	if got := unsafe.Sizeof(detector.Heartbeat{}); got != 32 {
		t.Errorf("unsafe.Sizeof(Heartbeat{}) = %d, want 32", got)
	}
}
