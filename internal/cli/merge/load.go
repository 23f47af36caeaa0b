package merge

import (
	"runtime"
	"sync"

	"github.com/inferbench/inferbench/result"
)

// Load reads the runs at paths (run folders or run.json files) in parallel, one decoder per CPU:
// decoding, not merging, is most of the time a merge of many large shards takes. The runs come
// back in the order of paths; the first error (by path order) is returned.
func Load(paths []string) ([]*result.Run, error) {
	runs := make([]*result.Run, len(paths))
	errs := make([]error, len(paths))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(len(paths), runtime.GOMAXPROCS(0)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				runs[i], errs[i] = result.Load(paths[i])
			}
		}()
	}
	for i := range paths {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return runs, nil
}
