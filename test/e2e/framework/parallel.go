package framework

import (
	"sync"

	"github.com/onsi/ginkgo/v2"
)

// InParallel runs do for every item, at most limit at a time (0: all at
// once), and returns when all are done. A failed assertion in do fails the
// spec.
func InParallel[T any](items []T, limit int, do func(T)) {
	if limit <= 0 {
		limit = len(items)
	}
	sem := make(chan struct{}, max(limit, 1))
	var wg sync.WaitGroup
	for _, item := range items {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer ginkgo.GinkgoRecover()
			defer wg.Done()
			defer func() { <-sem }()
			do(item)
		}()
	}
	wg.Wait()
}
