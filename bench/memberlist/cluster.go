package main

// Node is one member of either library under test.
type Node interface {
	Name() string
	Impair() *Impair
	// Alive is how many members this one sees alive or suspect (itself included).
	Alive() int
	// Seen names the members this one sees alive or suspect (itself
	// included), in no particular order.
	Seen() []string
	// Stop shuts the member down without leaving.
	Stop()
}

// Cluster starts members of one library on loopback, each behind its own
// Impair, reporting dead declarations to rec.
type Cluster interface {
	Library() string
	// StartOne starts member i (named m00, m01...), joined through seeds
	// (none for the first member), and returns it with its address.
	StartOne(i int, seeds []string, rec *Recorder, seed uint64) (Node, string, error)
}

// startGroup starts n members of c one after the other, each joining
// through member 0, or through every earlier member with allSeeds, and
// returns them with their addresses.
func startGroup(c Cluster, n int, allSeeds bool, rec *Recorder, seed uint64) ([]Node, []string, error) {
	var nodes []Node
	var addrs []string
	for i := 0; i < n; i++ {
		var seeds []string
		if i > 0 {
			seeds = addrs[:1]
			if allSeeds {
				seeds = addrs
			}
		}
		nd, addr, err := c.StartOne(i, seeds, rec, seed)
		if err != nil {
			return nodes, addrs, err
		}
		nodes = append(nodes, nd)
		addrs = append(addrs, addr)
	}
	return nodes, addrs, nil
}
