package trace

import "math/bits"

// AlsoReceived counts the sequence numbers of other's records as received
// in a's Stats: Lost, LossRate, LossBursts and LongestBurst count the
// numbers in [FirstSeq, LastSeq] of a's records that neither a's records
// nor other's have. Give it the records of the stream that arrived but are
// not part of it (those the input check left out, Checker), so that loss
// counts heartbeats never received. Nothing else of a's Stats changes
// (FirstSeq and LastSeq are a's records'); other is read when Stats is
// called, not copied. nil undoes it.
func (a *Accumulator) AlsoReceived(other *Accumulator) { a.also = other }

// alsoReceived is how many sequence numbers in [minSeq, maxSeq] the
// records of a.also have and a's do not.
func (a *Accumulator) alsoReceived() uint64 {
	if a.also == nil || !a.also.hasSeq || !a.hasSeq {
		return 0
	}
	var n uint64
	for k, op := range a.also.pages {
		if k < a.minSeq>>seqPageBits || k > a.maxSeq>>seqPageBits {
			continue
		}
		pg := a.pages[k]
		for w, x := range op {
			if pg != nil {
				x &^= pg[w]
			}
			if x == 0 {
				continue
			}
			// Bit b of word w is the number lo + b.
			lo := k<<seqPageBits + uint64(w)*64
			if lo < a.minSeq {
				x &= ^uint64(0) << (a.minSeq - lo) // 0 when the word is below
			}
			if hi := lo + 63; hi > a.maxSeq {
				x &= ^uint64(0) >> (hi - a.maxSeq) // 0 when the word is above
			}
			n += uint64(bits.OnesCount64(x))
		}
	}
	return n
}
