//go:build !unix

package qos

import (
	"testing"
	"time"
)

// cpuTime: getrusage(2) is Unix only; the benchmark that reads it skips.
func cpuTime(b *testing.B) time.Duration {
	b.Skip("CPU time from getrusage: Unix only")
	return 0
}
