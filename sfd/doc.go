// Package sfd implements SFD, the self-tuning failure detector of N. Xiong,
// A. V. Vasilakos, J. Wu, Y. R. Yang, A. Rindos, Y. Zhou, W.-Z. Song and
// Y. Pan ("A self-tuning failure detection scheme for cloud computing
// service", IPDPS 2012, 668–679), as restated by Li Yanping and Lin Jianhui
// [SFD-zh]; docs/algorithms.md, “SFD, the self-tuning detector”.
//
// SFD is Chen, Toueg and Aguilera's NFD-E (package chen) whose safety margin
// SM is moved by ±β once per slot according to the QoS the detector measures
// on its own output, against targets TD_U, MR_U and QAP_L. When speed and
// accuracy are both violated it says so: State() is CannotMeet, it stops
// adapting and keeps SM. The control rule is the pure function Control, the
// update the pure function Adjust.
//
// The English paper was not available and [SFD-zh] lost several formulas;
// these are the reconstructed or chosen parts (docs/algorithms.md,
// “SFD, the self-tuning detector”, lists them with the reasons):
//   - SM_1 = α and SM_{j+1} = SM_j + Sat_j (not SM_{k+1} = α + Sat_k);
//     α and β are durations (Config.InitialMargin, Config.Step).
//   - Rule 1's sign is −β (from the experiment text); rule 3 fires when MR
//     or QAP is violated (either, not both); ties count as met.
//   - Rule 4 is sticky: once SFD cannot meet the QoS it never adapts again.
//   - One adjustment per slot; a slot is Config.SlotHeartbeats Fresh heartbeats
//     after warm-up (default 100); QoS is cumulative over all slots since
//     warm-up, measured as in docs/algorithms.md, “Replaying a trace”
//     (trust→suspect transitions, suspected time, mean TD_k = τ_{k+1} − σ_k).
//   - TD uses arrivals by default (τ_{k+1} − A_k + d̄, d̄ = Config.OneWayDelay,
//     default 0) because live sender and monitor clocks differ; set
//     UseSendTime for synchronised clocks or replay on one clock.
//   - SM is floored at Config.MinMargin (default 0); when rule 1 asks to go
//     below the floor, State() is AtFloor (the TD target cannot be met with
//     that floor; not final). There is no ceiling.
//   - Zero targets are "no bound", so the zero Config never adapts.
//   - EA uses sequence numbers with the configured Δ (not the mean
//     inter-arrival of [SFD-zh]'s deployment text); [SFD-zh]'s gap filling
//     of lost messages is not needed with sequence numbers and not offered.
package sfd
