package main

// Node is one member of either library under test.
type Node interface {
	Name() string
	Impair() *Impair
	// Alive is how many members this one sees alive or suspect (itself included).
	Alive() int
	// Stop shuts the member down without leaving.
	Stop()
}

// Cluster starts n members of one library on loopback, each behind its own
// Impair, reporting dead declarations to rec, and joins them through the
// first.
type Cluster interface {
	Library() string
	Start(n int, rec *Recorder, seed uint64) ([]Node, error)
}
