package monitor

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
)

// The peer's hot fields fit in its first two cache lines, and its size is a
// size class (192) whose objects start on a cache line (see peer).
func TestPeerLayout(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Skip("layout is tuned for 64-bit platforms")
	}
	var p peer
	assert.Equal(t, uintptr(192), unsafe.Sizeof(p))
	hot := map[string]uintptr{
		"name":       unsafe.Offsetof(p.name) + unsafe.Sizeof(p.name),
		"det":        unsafe.Offsetof(p.det) + unsafe.Sizeof(p.det),
		"heartbeats": unsafe.Offsetof(p.heartbeats) + unsafe.Sizeof(p.heartbeats),
		"high":       unsafe.Offsetof(p.high) + unsafe.Sizeof(p.high),
		"m":          unsafe.Offsetof(p.m) + unsafe.Sizeof(p.m),
		"acc":        unsafe.Offsetof(p.acc) + unsafe.Sizeof(p.acc),
	}
	for f, end := range hot {
		assert.LessOrEqual(t, end, uintptr(128), f)
	}
	assert.LessOrEqual(t, unsafe.Offsetof(p.det)+unsafe.Sizeof(p.det), uintptr(64), "lookup, lock and detector share the first line")
}
