// Package procgroup keeps the process groups inferbench starts (exec commands, workers, launched
// servers: each in its own group, so that a terminal's Ctrl-C reaches only inferbench) so that
// an exit at once — the second Ctrl-C — kills them all instead of leaving them running,
// parented to init.
package procgroup

import "sync"

var (
	mu     sync.Mutex
	groups = map[int]int{} // group leader pid -> registrations
)

// Add records a started process that leads its own process group. Call done when it has been
// waited for.
func Add(pid int) (done func()) {
	mu.Lock()
	groups[pid]++
	mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			mu.Lock()
			if groups[pid]--; groups[pid] <= 0 {
				delete(groups, pid)
			}
			mu.Unlock()
		})
	}
}

// KillAll kills every recorded process group (SIGKILL) and returns how many it signalled.
func KillAll() int {
	mu.Lock()
	pids := make([]int, 0, len(groups))
	for pid := range groups {
		pids = append(pids, pid)
	}
	mu.Unlock()
	for _, pid := range pids {
		kill(pid)
	}
	return len(pids)
}
