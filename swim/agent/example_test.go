package agent_test

import (
	"context"
	"fmt"
	"time"

	"github.com/fdkit/fdkit/swim"
	"github.com/fdkit/fdkit/swim/agent"
)

func Example() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	key := []byte("0123456789abcdef") // AES-128; use a random key in production
	cfg := agent.Config{
		Keys:     [][]byte{key},
		Protocol: swim.Config{ProbeInterval: 200 * time.Millisecond, ProbeTimeout: 100 * time.Millisecond},
	}
	a := cfg
	a.ID = "a"
	first, err := agent.Start(ctx, a)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer first.Close()

	b := cfg
	b.ID = "b"
	second, err := agent.Start(ctx, b)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer second.Close()
	events, stop := first.Subscribe(16)
	defer stop()

	jctx, jcancel := context.WithTimeout(ctx, 5*time.Second)
	defer jcancel()
	if err := second.Join(jctx, first.Self().Addr); err != nil {
		fmt.Println(err)
		return
	}
	e := <-events
	fmt.Println("a saw:", e.Kind, e.Node.ID)
	for _, m := range second.Members() {
		fmt.Println("b's view:", m.Node.ID, m.State, m.Self)
	}
	// Output:
	// a saw: join b
	// b's view: b alive true
	// b's view: a alive false
}
