package agent

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The check docs/coming-from-memberlist.md gives before stage 2 of turning
// encryption on (user46 P6): in stage 1 a member restarted with a wrong
// key shows nothing, no member counting an authentication failure, since
// all send plain; once one member seals (SetSendPlain(false)), the
// wrong-keyed member counts failures within a few periods and the members
// whose key is the sealing member's count none.
func TestEncryptionStageCheckFindsWrongKey(t *testing.T) {
	wrong := []byte("fedcba9876543210fedcba9876543210")
	cfgs := make([]Config, 4)
	for i := range cfgs {
		cfgs[i] = Config{Keys: [][]byte{testKey}, AcceptPlain: true, SendPlain: true}
	}
	cfgs[3].Keys = [][]byte{wrong}
	as := groupOf(t, cfgs)
	periodsFrom(t, as...)(3)
	for i, a := range as {
		assert.Zero(t, a.Stats().AuthFailures, "member %d in stage 1", i)
	}
	require.NoError(t, as[0].SetSendPlain(false))
	require.Eventually(t, func() bool { return as[3].Stats().AuthFailures > 0 }, 10*time.Second, time.Millisecond,
		"the wrong-keyed member counts failures once one member seals")
	periodsFrom(t, as[0])(2 * len(as))
	for i, a := range as[:3] {
		assert.Zero(t, a.Stats().AuthFailures, "member %d, with the sealing member's key", i)
	}
	t.Logf("wrong-keyed member: AuthFailures %d after %d of the sealing member's periods", as[3].Stats().AuthFailures, 2*len(as))
}
