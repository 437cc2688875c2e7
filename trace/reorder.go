package trace

// reorderBuf holds a Spool's held-back heartbeats and gives them back least
// first by pendHB.before (arrival, then input position), as one min-heap
// of them would. Reception logs are nearly in arrival order, so it keeps
// two parts: run, the heartbeats that arrived at or after every heartbeat
// held in run when they were added (a FIFO ring, sorted since each is
// added after all the others: its input position is the greatest), and
// late, a min-heap of the others. The least held heartbeat is the lesser
// of run's first and late's least, so a heartbeat in order costs an append
// and a removal instead of a heap's sift through log₂ SpoolReorder
// levels, and a reordered one costs what it did.
type reorderBuf struct {
	ring []pendHB // run: ring[(head+i) % len(ring)] for i < n; len is 0 or a power of two
	head int
	n    int
	late minHeap[pendHB]
}

// len is how many heartbeats are held.
func (b *reorderBuf) len() int { return b.n + len(b.late) }

// push adds x, whose input position is greater than every held one's.
func (b *reorderBuf) push(x pendHB) {
	if b.n > 0 && x.before(b.ring[(b.head+b.n-1)&(len(b.ring)-1)]) {
		b.late.push(x)
		return
	}
	if b.n == len(b.ring) {
		b.grow()
	}
	b.ring[(b.head+b.n)&(len(b.ring)-1)] = x
	b.n++
}

// grow doubles the ring (from 16), its heartbeats first.
func (b *reorderBuf) grow() {
	r := make([]pendHB, max(16, 2*len(b.ring)))
	for i := range b.n {
		r[i] = b.ring[(b.head+i)&(len(b.ring)-1)]
	}
	b.ring, b.head = r, 0
}

// pop removes and returns the least held heartbeat; b must not be empty.
func (b *reorderBuf) pop() pendHB {
	if len(b.late) > 0 && (b.n == 0 || b.late[0].before(b.ring[b.head])) {
		return b.late.pop()
	}
	x := b.ring[b.head]
	b.head = (b.head + 1) & (len(b.ring) - 1)
	b.n--
	return x
}
