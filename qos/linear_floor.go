// The linear families' TD sums under a floor, for every query point in one pass.

package qos

// floorLanes is how many query points sumFloors sums in one pass over the
// heartbeats.
const floorLanes = 4

// sumFloors sets floorSum and, with cells, floorCells from the per-heartbeat
// data in memory: per query point p, Σ_k max(td0_k + scale_k·p, floor_k)
// over the stream and per time cell, each sum added in heartbeat order,
// as a loop over the heartbeats for that point alone adds it (the sums are
// the same to the bit). A point's sum is a chain of dependent additions,
// so a pass adds floorLanes points side by side, and keeps a cell's sums
// in registers along each run of heartbeats in that cell.
func (lc *linearCurve) sumFloors() {
	P := len(lc.ps)
	lc.floorSum = make([]float64, P)
	if lc.cells != nil {
		n := lc.cells.grid.n
		flat := make([]float64, P*n)
		lc.floorCells = make([][]float64, P)
		for i := range lc.floorCells {
			lc.floorCells[i] = flat[i*n : (i+1)*n : (i+1)*n]
		}
	}
	i := 0
	for ; i+floorLanes <= P; i += floorLanes {
		lc.sumFloorsAt4(i)
	}
	for ; i < P; i++ {
		lc.sumFloorsAt1(i)
	}
}

// cellRuns calls fn with each run [a, b) of consecutive heartbeats in one
// time cell (ev: the cell of each heartbeat), in order.
func cellRuns(ev []uint8, fn func(a, b int, cell uint8)) {
	for a := 0; a < len(ev); {
		b := a + 1
		for b < len(ev) && ev[b] == ev[a] {
			b++
		}
		fn(a, b, ev[a])
		a = b
	}
}

// sumFloorsAt4 sums the points i to i+3.
func (lc *linearCurve) sumFloorsAt4(i int) {
	p0, p1, p2, p3 := lc.ps[i], lc.ps[i+1], lc.ps[i+2], lc.ps[i+3]
	td0 := lc.td0
	sc, fl := lc.scales[:len(td0)], lc.floor[:len(td0)]
	var s0, s1, s2, s3 float64
	if lc.floorCells == nil {
		for k, c := range td0 {
			s, f := sc[k], fl[k]
			s0 += floored(c+s*p0, f)
			s1 += floored(c+s*p1, f)
			s2 += floored(c+s*p2, f)
			s3 += floored(c+s*p3, f)
		}
	} else {
		c0, c1, c2, c3 := lc.floorCells[i], lc.floorCells[i+1], lc.floorCells[i+2], lc.floorCells[i+3]
		cellRuns(lc.evCell[:len(td0)], func(a, b int, cell uint8) {
			x0, x1, x2, x3 := c0[cell], c1[cell], c2[cell], c3[cell]
			for k := a; k < b; k++ {
				c, s, f := td0[k], sc[k], fl[k]
				v0 := floored(c+s*p0, f)
				v1 := floored(c+s*p1, f)
				v2 := floored(c+s*p2, f)
				v3 := floored(c+s*p3, f)
				s0, x0 = s0+v0, x0+v0
				s1, x1 = s1+v1, x1+v1
				s2, x2 = s2+v2, x2+v2
				s3, x3 = s3+v3, x3+v3
			}
			c0[cell], c1[cell], c2[cell], c3[cell] = x0, x1, x2, x3
		})
	}
	lc.floorSum[i], lc.floorSum[i+1], lc.floorSum[i+2], lc.floorSum[i+3] = s0, s1, s2, s3
}

// sumFloorsAt1 sums the point i alone.
func (lc *linearCurve) sumFloorsAt1(i int) {
	p := lc.ps[i]
	td0 := lc.td0
	sc, fl := lc.scales[:len(td0)], lc.floor[:len(td0)]
	var sum float64
	if lc.floorCells == nil {
		for k, c := range td0 {
			sum += floored(c+sc[k]*p, fl[k])
		}
	} else {
		cs := lc.floorCells[i]
		cellRuns(lc.evCell[:len(td0)], func(a, b int, cell uint8) {
			x := cs[cell]
			for k := a; k < b; k++ {
				v := floored(td0[k]+sc[k]*p, fl[k])
				sum, x = sum+v, x+v
			}
			cs[cell] = x
		})
	}
	lc.floorSum[i] = sum
}

// floored is max(v, f) for what sumFloors adds: v = td0_k + scale_k·p and
// f = floor_k are never NaN (td0 and floor come from durations, scale
// and p are finite: openSegment and sweepLinear check them), and where
// max would give +0 for −0 it gives −0, which adds the same to a sum
// that starts at +0 (such a sum is never −0). It compiles to a compare
// and a rarely taken jump instead of max's handling of NaN and zeros.
func floored(v, f float64) float64 {
	if v < f {
		return f
	}
	return v
}
