package swim

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A suspicion records at most maxConfirmers confirmations however many new
// sender ids confirm it (each extra one is refused, so the list and the scan
// over it stay bounded), and the first k still shorten the timeout.
func TestSuspicionConfirmersBounded(t *testing.T) {
	s := newSuspicion(0, time.Second, 10*time.Second, 3, "a")
	before := s.deadline
	require.True(t, s.confirm(0, "b"))
	require.Less(t, s.deadline, before, "a confirmation shortens the timeout")
	require.False(t, s.confirm(0, "b"), "the same id counts once")
	require.False(t, s.confirm(0, "a"), "the first suspecter is no confirmation")
	for i := range 10 * maxConfirmers {
		s.confirm(0, ID(fmt.Sprintf("forged-%d", i)))
	}
	require.Len(t, s.confirmers, maxConfirmers)
	require.Equal(t, time.Second, s.deadline-s.start, "k or more confirmations: the timeout is Min")
}
