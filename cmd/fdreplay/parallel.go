// Running independent steps of a run on every core.

package main

import (
	"runtime"
	"sync"
)

// inParallel runs jobs on up to GOMAXPROCS goroutines, taking them in
// order (put the longest first), and waits for them all. It returns the
// error of the first job in order that failed, so that the error a run
// reports does not depend on the number of cores or on timing. The jobs
// must not share unguarded state; whatever they print must be gathered and
// printed in order by the caller.
func inParallel(jobs []func() error) error {
	errs := make([]error, len(jobs))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(jobs)) {
		wg.Go(func() {
			for i := range next {
				errs[i] = jobs[i]()
			}
		})
	}
	for i := range jobs {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
