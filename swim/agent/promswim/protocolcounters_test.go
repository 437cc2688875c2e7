package promswim

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Counters grouped in nested structs are exported under their own field
// names, as ungrouped ones are; fields that are not integers are not
// counters.
func TestProtocolCountersWalkNestedStructs(t *testing.T) {
	type group struct {
		PingReqsSent int
		Note         string
	}
	type stats struct {
		ProbesStarted int
		Probe         group
	}
	cs := protocolCounters(nil, reflect.TypeFor[stats](), nil)
	var names []string
	for _, c := range cs {
		names = append(names, c.d.String())
	}
	assert.Len(t, names, 2)
	assert.Contains(t, names[0], `fqName: "fdswim_protocol_probes_started_total"`)
	assert.Contains(t, names[1], `fqName: "fdswim_protocol_ping_reqs_sent_total"`)
}
