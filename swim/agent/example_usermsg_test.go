package agent_test

import (
	"context"
	"fmt"
	"time"

	"github.com/fdkit/fdkit/swim"
	"github.com/fdkit/fdkit/swim/agent"
)

// Two agents on loopback: a starts with metadata and shares its state with
// joiners; b joins, sees the metadata and the state, and receives a's
// broadcast on its Receive channel.
func ExampleAgent_Broadcast() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg := agent.Config{Keys: [][]byte{[]byte("0123456789abcdef")},
		Protocol: swim.Config{ProbeInterval: 200 * time.Millisecond, ProbeTimeout: 100 * time.Millisecond}}

	ca := cfg
	ca.ID, ca.Protocol.Meta = "a", []byte("zone=eu-1")
	ca.LocalState = func(join bool) []byte { return []byte("a's catalogue v7") }
	a, err := agent.Start(ctx, ca)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer a.Close()

	states := make(chan string, 4)
	cb := cfg
	cb.ID = "b"
	cb.MergeRemoteState = func(from swim.Node, state []byte, join bool) {
		states <- fmt.Sprintf("state from %s (join %v): %s", from.ID, join, state)
	}
	b, err := agent.Start(ctx, cb)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer b.Close()
	msgs, stop := b.Receive(16)
	defer stop()

	jctx, jcancel := context.WithTimeout(ctx, 5*time.Second)
	defer jcancel()
	if err := b.Join(jctx, a.Self().Addr); err != nil {
		fmt.Println(err)
		return
	}
	select {
	case s := <-states:
		fmt.Println(s)
	case <-time.After(10 * time.Second):
		fmt.Println("no state")
	}
	for _, m := range b.Members() {
		if m.Node.ID == "a" {
			fmt.Printf("b sees a with meta %q\n", m.Meta)
		}
	}
	if err := a.Broadcast(ctx, "", []byte("hello, group")); err != nil {
		fmt.Println(err)
		return
	}
	select {
	case m := <-msgs:
		fmt.Printf("b received from %s: %s\n", m.From, m.Data)
	case <-time.After(10 * time.Second):
		fmt.Println("no broadcast")
	}
	// Output:
	// state from a (join true): a's catalogue v7
	// b sees a with meta "zone=eu-1"
	// b received from a: hello, group
}
