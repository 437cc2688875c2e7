package sfd

import (
	"fmt"
	"time"
)

// QoS is a measured quality of service (Chen, Toueg and Aguilera, IEEE TC
// 51(5), 2002; docs/algorithms.md, “QoS metrics”).
type QoS struct {
	// TD is the mean detection time.
	TD time.Duration
	// MistakesPerSecond is the mistake rate MR (λ_M), in mistakes per second.
	MistakesPerSecond float64
	// QAP is the query accuracy probability P_A, in [0, 1].
	QAP float64
}

// Targets are SFD's QoS requirements. A zero field means "no bound".
type Targets struct {
	// MaxTD is TD_U, the upper bound on the mean detection time.
	MaxTD time.Duration
	// MaxMistakesPerSecond is MR_U, the upper bound on the mistake rate, in
	// mistakes per second (1 per minute is 1.0/60).
	MaxMistakesPerSecond float64
	// MinQAP is QAP_L, the lower bound on the query accuracy probability.
	MinQAP float64
}

func (t Targets) validate() error {
	switch {
	case t.MaxTD < 0:
		return fmt.Errorf("sfd: Targets.MaxTD %v is negative", t.MaxTD)
	case !(t.MaxMistakesPerSecond >= 0) || t.MaxMistakesPerSecond > 1e300:
		return fmt.Errorf("sfd: Targets.MaxMistakesPerSecond %v must be finite and ≥ 0", t.MaxMistakesPerSecond)
	case !(t.MinQAP >= 0 && t.MinQAP <= 1):
		return fmt.Errorf("sfd: Targets.MinQAP %v is not in [0, 1]", t.MinQAP)
	}
	return nil
}

// Rule is the control rule of SFD's Algorithm 1 applied at a slot boundary.
type Rule int

const (
	// RuleNone: no slot has been evaluated yet.
	RuleNone Rule = iota
	// RuleDecrease is rule 1: TD > TD_U with MR and QAP within target: too
	// slow with accuracy to spare, Sat = −β.
	RuleDecrease
	// RuleHold is rule 2: every target met, Sat = 0 (steady state).
	RuleHold
	// RuleIncrease is rule 3: TD ≤ TD_U but MR > MR_U or QAP < QAP_L: too many
	// mistakes with speed to spare, Sat = +β.
	RuleIncrease
	// RuleCannotMeet is rule 4: speed and accuracy both violated; SFD reports
	// that it cannot meet the requested QoS, stops adapting and keeps SM.
	RuleCannotMeet
)

var ruleNames = [...]string{"none", "rule 1 (−β)", "rule 2 (hold)", "rule 3 (+β)", "rule 4 (cannot meet)"}

func (r Rule) String() string {
	if r < 0 || int(r) >= len(ruleNames) {
		return fmt.Sprintf("Rule(%d)", int(r))
	}
	return ruleNames[r]
}

// Control returns the rule of SFD's Algorithm 1 (Xiong et al., IPDPS 2012, as
// restated in [SFD-zh]; docs/algorithms.md, “SFD, the self-tuning detector”)
// for the measured QoS q and the targets t. Ties count as met (TD ≤ TD_U, MR ≤
// MR_U, QAP ≥ QAP_L); a zero target is no bound. Rule 3 fires on either
// accuracy violation (MR or QAP), the [UNSURE] reading of "MR > and QAP <".
func Control(q QoS, t Targets) Rule {
	fast := t.MaxTD == 0 || q.TD <= t.MaxTD
	accurate := (t.MaxMistakesPerSecond == 0 || q.MistakesPerSecond <= t.MaxMistakesPerSecond) &&
		(t.MinQAP == 0 || q.QAP >= t.MinQAP)
	switch {
	case !fast && accurate:
		return RuleDecrease
	case fast && accurate:
		return RuleHold
	case fast && !accurate:
		return RuleIncrease
	}
	return RuleCannotMeet
}

// Adjust returns the safety margin after rule r: SM_{j+1} = SM_j + Sat_j with
// Sat_j = −β, 0, +β (docs/algorithms.md, “SFD, the self-tuning detector”, eqs.
// 3–4 as reconstructed), floored at minMargin (an fdkit guard). RuleCannotMeet
// and RuleNone keep sm.
func Adjust(sm time.Duration, r Rule, beta, minMargin time.Duration) time.Duration {
	switch r {
	case RuleDecrease:
		sm -= beta
	case RuleIncrease:
		sm += beta
	}
	return max(sm, minMargin)
}
