package trace

// minHeap is a binary min-heap ordered by its elements' before method
// (container/heap's algorithm without its interface, which would box every
// value pushed: an allocation per heartbeat). Generator, MergedGenerator and
// Spool use it.
type minHeap[T interface{ before(T) bool }] []T

func (h *minHeap[T]) push(x T) {
	s := append(*h, x)
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if !s[i].before(s[p]) {
			break
		}
		s[i], s[p] = s[p], s[i]
		i = p
	}
	*h = s
}

// pop removes and returns the least element; h must not be empty.
func (h *minHeap[T]) pop() T {
	s := *h
	top := s[0]
	n := len(s) - 1
	s[0] = s[n]
	s = s[:n]
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < n && s[l].before(s[m]) {
			m = l
		}
		if l+1 < n && s[l+1].before(s[m]) {
			m = l + 1
		}
		if m == i {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
	*h = s
	return top
}
