package kvstore_test

import (
	"context"
	"fmt"
	"net/netip"
	"strconv"
	"time"

	"github.com/fdkit/fdkit/examples/kvstore"
	"github.com/fdkit/fdkit/swim"
	"github.com/fdkit/fdkit/swim/agent"
)

// Two replicas with a cluster label and encryption: the second joins
// through the name "localhost", and a write on either reaches both.
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cfg := func(id string) agent.Config {
		return agent.Config{
			ID: swim.ID(id), Label: "example", Keys: [][]byte{[]byte("0123456789abcdef")}, // use a random key in production
			Protocol: swim.Config{ProbeInterval: 200 * time.Millisecond, ProbeTimeout: 100 * time.Millisecond},
		}
	}
	first, err := kvstore.New(ctx, cfg("first"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer first.Close()
	second, err := kvstore.New(ctx, cfg("second"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer second.Close()
	port := netip.MustParseAddrPort(first.Agent().Self().Addr).Port()
	if err := second.Join(ctx, "localhost:"+strconv.Itoa(int(port))); err != nil {
		fmt.Println(err)
		return
	}
	if err := first.Set(ctx, "colour", "blue"); err != nil {
		fmt.Println(err)
		return
	}
	for ctx.Err() == nil {
		if v, ok := second.Get("colour"); ok {
			fmt.Println("second sees colour =", v)
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	// Output:
	// second sees colour = blue
}
