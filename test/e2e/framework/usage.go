package framework

import (
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Usage is what the hub process holds: goroutines, live heap (after a
// garbage collection) and resident memory, in bytes.
type Usage struct {
	Goroutines, Heap, RSS float64
}

func (u Usage) String() string {
	return fmt.Sprintf("%.0f goroutines, %.0f MiB heap, %.0f MiB resident", u.Goroutines, u.Heap/(1<<20), u.RSS/(1<<20))
}

// Usage collects garbage in the hub (pprof's heap profile does, with gc=1)
// and then reads what it holds from its metrics.
func (h *Hub) Usage() (Usage, error) {
	resp, err := http.Get(strings.TrimSuffix(h.MetricsURL(), "/metrics") + "/debug/pprof/heap?gc=1")
	if err != nil {
		return Usage{}, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	ms, err := Scrape(h.MetricsURL())
	if err != nil {
		return Usage{}, err
	}
	var u Usage
	for name, v := range map[string]*float64{"go_goroutines": &u.Goroutines, "go_memstats_heap_inuse_bytes": &u.Heap, "process_resident_memory_bytes": &u.RSS} {
		n, ok := ms.Sum(name, nil)
		if !ok {
			return Usage{}, fmt.Errorf("the hub does not report %s", name)
		}
		*v = n
	}
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
	// KCPScoped counts kcp's own per-workspace scoped informers, one
	// handler each. kcp v0.28.1's per-workspace garbage collector makes
	// them with a context that never ends, so they outlive the workspace
	// (see docs/reliability.md).
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
