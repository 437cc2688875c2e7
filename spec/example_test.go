package spec_test

import (
	"fmt"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/phi"
	"github.com/fdkit/fdkit/spec"
)

func Example() {
	s, err := spec.Parse("phi-akka(threshold=10, pause=0, min-std=100ms)")
	if err != nil {
		fmt.Println(err)
		return
	}
	d, err := s.New()
	if err != nil {
		fmt.Println(err)
		return
	}
	d.Observe(detector.Heartbeat{Arrival: 0})
	fmt.Println(s)
	fmt.Println(d.Suspected(5 * time.Second))

	// Printing a config gives its spec.
	text, _ := spec.Format(phi.NormalConfig{Threshold: 8, MinStdDev: new(time.Duration(0))})
	fmt.Println(text)

	// Presets spell out a system's documented defaults.
	c, _ := spec.Parse("cassandra")
	fmt.Println(c)

	_, err = spec.Parse("phi-akka(pause=3)")
	fmt.Println(err)
	// Output:
	// phi-akka(threshold=10, min-std=100ms, pause=0s)
	// true
	// phi-normal(threshold=8, min-std=0s)
	// phi-cassandra(threshold=8, window=1000, bootstrap-interval=2s, max-interval=2s)
	// spec "phi-akka(pause=3)": phi-akka: pause: "3" is not a duration such as 3s, 250ms or 0
}
