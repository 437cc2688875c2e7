package swim_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/fdkit/fdkit/swim"
)

// Metadata and application messages between two members, delivered by
// hand. SetMeta raises a's incarnation and sends the new Alive, with the
// metadata, at once in a ping (as a refutation is); b reports it as an
// update event. The broadcast rides on the next packet a sends to b, here
// the direct message, and is not sent to b again (the probe's ping has
// none). The Alive also goes out in the drain loop's first round, a
// gossip packet (Config.GossipInterval).
func ExampleMember_Broadcast() {
	a, _ := swim.New(swim.Config{Self: swim.Node{ID: "a", Addr: "10.0.0.1:7946"}, SyncProbes: true}, rand.New(rand.NewPCG(1, 1)))
	b, _ := swim.New(swim.Config{Self: swim.Node{ID: "b", Addr: "10.0.0.2:7946"}, SyncProbes: true}, rand.New(rand.NewPCG(2, 2)))
	a.Bootstrap([]swim.Node{b.Self()})
	b.Bootstrap([]swim.Node{a.Self()})

	if err := a.SetMeta([]byte("zone=eu-1")); err != nil {
		panic(err)
	}
	if err := a.Broadcast("release", []byte("v2 is out")); err != nil {
		panic(err)
	}
	if err := a.SendTo(0, "b", []byte("hello b")); err != nil {
		panic(err)
	}
	a.Tick(0) // the first probe: a ping to b
	for _, p := range a.Ready().Packets {
		fmt.Println("a sends", p.Kind, "with", len(p.Updates), "update(s),", len(p.Broadcasts), "broadcast(s)")
		if err := b.Step(0, &p); err != nil {
			panic(err)
		}
	}
	r := b.Ready()
	for _, e := range r.Events {
		fmt.Printf("b: %s %s incarnation %d meta %q\n", e.Kind, e.Node.ID, e.Incarnation, e.Meta)
	}
	for _, m := range r.Messages {
		fmt.Printf("b got from %s: %q (broadcast %v)\n", m.From, m.Data, m.Broadcast)
	}
	st, _ := b.Member("a", 0)
	fmt.Printf("b's view of a: meta %q, wire formats %d..%d\n", st.Meta, st.Versions.Min, st.Versions.Max)
	// Output:
	// a sends ping with 1 update(s), 0 broadcast(s)
	// a sends user with 1 update(s), 1 broadcast(s)
	// a sends ping with 1 update(s), 0 broadcast(s)
	// a sends gossip with 1 update(s), 0 broadcast(s)
	// b: update a incarnation 1 meta "zone=eu-1"
	// b got from a: "v2 is out" (broadcast true)
	// b got from a: "hello b" (broadcast false)
	// b's view of a: meta "zone=eu-1", wire formats 1..2
}
