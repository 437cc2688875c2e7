package sfd_test

import (
	"testing"
	"time"

	"github.com/fdkit/fdkit/sfd"
	"github.com/stretchr/testify/assert"
)

func ms(x float64) time.Duration { return time.Duration(x * float64(time.Millisecond)) }

// docs/algorithms.md, “SFD, the self-tuning detector” table: SM_1 = 20 ms, β =
// 10 ms, TD_U = 200 ms, MR_U = 1 per minute, QAP_L = 0.999.
func TestControlTable(t *testing.T) {
	targets := sfd.Targets{MaxTD: ms(200), MaxMistakesPerSecond: 1.0 / 60, MinQAP: 0.999}
	rows := []struct {
		td, mrPerMin, qap float64
		rule              sfd.Rule
		sm                float64
	}{
		{150, 3.0, 0.9950, sfd.RuleIncrease, 30},
		{160, 1.5, 0.9985, sfd.RuleIncrease, 40},
		{170, 0.6, 0.9994, sfd.RuleHold, 40},
		{215, 0.2, 0.9998, sfd.RuleDecrease, 30},
		{230, 2.0, 0.9980, sfd.RuleCannotMeet, 30},
	}
	sm := ms(20)
	for i, r := range rows {
		q := sfd.QoS{TD: ms(r.td), MistakesPerSecond: r.mrPerMin / 60, QAP: r.qap}
		rule := sfd.Control(q, targets)
		assert.Equal(t, r.rule, rule, "slot %d", i+1)
		sm = sfd.Adjust(sm, rule, ms(10), 0)
		assert.Equal(t, ms(r.sm), sm, "SM after slot %d", i+1)
	}
}

func TestControlEdges(t *testing.T) {
	tg := sfd.Targets{MaxTD: ms(200), MaxMistakesPerSecond: 0.01, MinQAP: 0.99}
	// Ties count as met.
	assert.Equal(t, sfd.RuleHold, sfd.Control(sfd.QoS{TD: ms(200), MistakesPerSecond: 0.01, QAP: 0.99}, tg))
	// Rule 3 on either accuracy violation.
	assert.Equal(t, sfd.RuleIncrease, sfd.Control(sfd.QoS{TD: ms(100), MistakesPerSecond: 0.02, QAP: 1}, tg))
	assert.Equal(t, sfd.RuleIncrease, sfd.Control(sfd.QoS{TD: ms(100), MistakesPerSecond: 0, QAP: 0.9}, tg))
	assert.Equal(t, sfd.RuleCannotMeet, sfd.Control(sfd.QoS{TD: ms(300), MistakesPerSecond: 0, QAP: 0.9}, tg))
	// Zero targets are no bound.
	assert.Equal(t, sfd.RuleHold, sfd.Control(sfd.QoS{TD: time.Hour, MistakesPerSecond: 9, QAP: 0}, sfd.Targets{}))
	// The floor and the rules that keep SM.
	assert.Equal(t, ms(5), sfd.Adjust(ms(10), sfd.RuleDecrease, ms(10), ms(5)))
	assert.Equal(t, ms(10), sfd.Adjust(ms(10), sfd.RuleCannotMeet, ms(10), 0))
	assert.Equal(t, ms(10), sfd.Adjust(ms(10), sfd.RuleNone, ms(10), 0))
	assert.Equal(t, "rule 4 (cannot meet)", sfd.RuleCannotMeet.String())
	assert.Equal(t, "cannot meet the requested QoS", sfd.CannotMeet.String())
}
