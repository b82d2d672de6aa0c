package localfleet

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
)

// Usage is what the hub process holds, in bytes after a garbage
// collection: its goroutines, its live heap objects (Live), the heap spans
// that hold them (Heap: Live plus the free room in spans that are partly
// used), goroutine stacks, heap the runtime has freed but not yet returned
// to the system (Unreturned), and resident memory.
type Usage struct {
	Goroutines, Live, Heap, Stacks, Unreturned, RSS float64
}

// InUse is the resident memory the process uses: what the runtime has
// freed and not yet returned to the system comes back to it in its own time.
func (u Usage) InUse() float64 {
	return u.RSS - u.Unreturned
}

func (u Usage) String() string {
	return fmt.Sprintf("%.0f goroutines, %.0f MiB live in %.0f MiB heap, %.0f MiB stacks, %.0f MiB freed not returned, %.0f MiB resident",
		u.Goroutines, u.Live/(1<<20), u.Heap/(1<<20), u.Stacks/(1<<20), u.Unreturned/(1<<20), u.RSS/(1<<20))
}

// heapProfiles numbers the heap profiles Usage keeps.
var heapProfiles atomic.Int32

// Usage collects garbage in the hub (pprof's heap profile does, with gc=1)
// and then reads what it holds from its metrics. With FLEET_HEAP_PROFILE_DIR
// set it keeps the heap profile there (heap-1.pb.gz, heap-2.pb.gz, ...), so
// that `go tool pprof -base` tells what a spec left behind.
func (h *Hub) Usage() (Usage, error) {
	resp, err := http.Get(strings.TrimSuffix(h.MetricsURL(), "/metrics") + "/debug/pprof/heap?gc=1")
	if err != nil {
		return Usage{}, err
	}
	err = keepHeapProfile(resp.Body)
	resp.Body.Close()
	if err != nil {
		return Usage{}, err
	}
	ms, err := Scrape(h.MetricsURL())
	if err != nil {
		return Usage{}, err
	}
	var u Usage
	var idle, released float64
	for name, v := range map[string]*float64{
		"go_goroutines":                   &u.Goroutines,
		"go_memstats_heap_alloc_bytes":    &u.Live,
		"go_memstats_heap_inuse_bytes":    &u.Heap,
		"go_memstats_stack_inuse_bytes":   &u.Stacks,
		"go_memstats_heap_idle_bytes":     &idle,
		"go_memstats_heap_released_bytes": &released,
		"process_resident_memory_bytes":   &u.RSS,
	} {
		n, ok := ms.Sum(name, nil)
		if !ok {
			return Usage{}, fmt.Errorf("the hub does not report %s", name)
		}
		*v = n
	}
	u.Unreturned = idle - released
	return u, nil
}

// Goroutines sorts the hub's goroutines by what holds them.
type Goroutines struct {
	Total int
	// Engaged counts the workspaces the hub's controllers serve.
	Engaged int
	// Handlers counts the event handlers on the hub's shared informers
	// (a goroutine each besides the one running it).
	Handlers int
	// KCPScoped counts kcp's per-workspace scoped informers that wait for
	// their workspace's context to end, a listener each. kcp v0.28.1's
	// garbage collector made them with a context that never ended; the
	// copy in third_party/kcp ends it with the workspace and dispatches
	// its handlers from one listener, so there should be none.
	KCPScoped int
}

func (g Goroutines) String() string {
	return fmt.Sprintf("%d goroutines (%d event handlers, %d kcp scoped informers) with %d workspaces engaged", g.Total, g.Handlers, g.KCPScoped, g.Engaged)
}

// Goroutines reads the hub's goroutines, grouped by stack.
func (h *Hub) Goroutines() (Goroutines, string, error) {
	resp, err := http.Get(strings.TrimSuffix(h.MetricsURL(), "/metrics") + "/debug/pprof/goroutine?debug=1")
	if err != nil {
		return Goroutines{}, "", err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return Goroutines{}, "", err
	}
	var g Goroutines
	for _, group := range strings.Split(string(raw), "\n\n") {
		var n int
		if _, err := fmt.Sscanf(group, "goroutine profile: total %d", &g.Total); err == nil {
			group = group[strings.Index(group, "\n")+1:]
		}
		if _, err := fmt.Sscanf(group, "%d @", &n); err != nil {
			continue
		}
		switch {
		case strings.Contains(group, "informers.(*processorListener).pop"):
			g.Handlers += n
		case strings.Contains(group, "informers.newScopedSharedIndexInformerWithContext"):
			g.KCPScoped += n
		}
	}
	ms, err := Scrape(h.MetricsURL())
	if err != nil {
		return Goroutines{}, "", err
	}
	engaged, _ := ms.Sum("fleet_engaged_workspaces", nil)
	g.Engaged = int(engaged)
	return g, string(raw), nil
}

func keepHeapProfile(profile io.Reader) error {
	dir := os.Getenv("FLEET_HEAP_PROFILE_DIR")
	if dir == "" {
		_, err := io.Copy(io.Discard, profile)
		return err
	}
	f, err := os.Create(filepath.Join(dir, fmt.Sprintf("heap-%d.pb.gz", heapProfiles.Add(1))))
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(f, profile)
	return err
}
