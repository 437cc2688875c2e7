package report

// seqWindow holds at most burstWindow sequence numbers and gives back the
// least first. Numbers mostly come in increasing order, so it keeps those
// not below the last one kept in order in a FIFO ring (sorted), the others
// in a min-heap, and the least is the lesser of the two heads: a number in
// order costs an append and a removal instead of a heap's sift through
// log₂ burstWindow levels.
type seqWindow struct {
	ring    []uint64 // ring[(head+i) & (len(ring)−1)] for i < n; len 0 or a power of two
	head, n int
	late    []uint64 // a min-heap
}

func (w *seqWindow) len() int { return w.n + len(w.late) }

// push adds v and, when the window is full, returns its least number.
func (w *seqWindow) push(v uint64) (uint64, bool) {
	if w.n > 0 && v < w.ring[(w.head+w.n-1)&(len(w.ring)-1)] {
		w.pushLate(v)
	} else {
		if w.n == len(w.ring) {
			r := make([]uint64, max(16, 2*len(w.ring)))
			for i := range w.n {
				r[i] = w.ring[(w.head+i)&(len(w.ring)-1)]
			}
			w.ring, w.head = r, 0
		}
		w.ring[(w.head+w.n)&(len(w.ring)-1)] = v
		w.n++
	}
	if w.len() <= burstWindow {
		return 0, false
	}
	return w.pop(), true
}

// pop removes and returns the least number; w must not be empty.
func (w *seqWindow) pop() uint64 {
	if len(w.late) > 0 && (w.n == 0 || w.late[0] < w.ring[w.head]) {
		return w.popLate()
	}
	x := w.ring[w.head]
	w.head = (w.head + 1) & (len(w.ring) - 1)
	w.n--
	return x
}

func (w *seqWindow) pushLate(v uint64) {
	w.late = append(w.late, v)
	for i := len(w.late) - 1; i > 0; {
		p := (i - 1) / 2
		if w.late[p] <= w.late[i] {
			break
		}
		w.late[p], w.late[i] = w.late[i], w.late[p]
		i = p
	}
}

func (w *seqWindow) popLate() uint64 {
	h := w.late
	x := h[0]
	n := len(h) - 1
	h[0] = h[n]
	h = h[:n]
	for i := 0; ; {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && h[r] < h[l] {
			m = r
		}
		if h[i] <= h[m] {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	w.late = h
	return x
}
