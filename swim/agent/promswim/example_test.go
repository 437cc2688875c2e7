package promswim_test

import (
	"context"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/fdkit/fdkit/swim/agent"
	"github.com/fdkit/fdkit/swim/agent/promswim"
)

func ExampleNewCollector() {
	a, err := agent.Start(context.Background(), agent.Config{Plain: true}) // a one-member group on 127.0.0.1
	if err != nil {
		panic(err)
	}
	defer a.Close()
	reg := prometheus.NewRegistry()
	reg.MustRegister(promswim.NewCollector(a))
	n, err := testutil.GatherAndCount(reg, "fdswim_members")
	fmt.Println(n, err) // one series per membership state
	// Output: 4 <nil>
}
