package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"

	"github.com/fleetplane/fleetplane/internal/huburl"
	"github.com/fleetplane/fleetplane/internal/localfleet"
)

// profiler takes pprof profiles of an embedded hub (started with
// --profiling) into a directory.
type profiler struct {
	hub *localfleet.Hub
	dir string
}

func (p *profiler) enabled() bool { return p != nil && p.dir != "" && p.hub.Pid() != 0 }

// cpu profiles the hub for d in the background; wait returns once the
// profile is written.
func (p *profiler) cpu(ctx context.Context, name string, d time.Duration) (wait func()) {
	if !p.enabled() {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.awaitServing(ctx)
		p.fetch(ctx, name+".cpu.pprof", fmt.Sprintf("profile?seconds=%d", int(d.Seconds())))
	}()
	return func() { <-done }
}

// allocs writes what the hub allocated over the next d (not only what
// stays live, as heap does), with a CPU profile of the same span.
func (p *profiler) allocs(ctx context.Context, name string, d time.Duration) {
	if !p.enabled() {
		return
	}
	wait := p.cpu(ctx, name, d)
	p.fetch(ctx, name+".allocs.pprof", fmt.Sprintf("allocs?seconds=%d", int(d.Seconds())))
	wait()
}

// awaitServing waits up to a minute for a hub process just launched to
// serve its metrics (and so pprof), which it does first of all.
func (p *profiler) awaitServing(ctx context.Context) {
	_ = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		_, err := localfleet.Scrape(p.hub.MetricsURL())
		return err == nil, nil
	})
}

// heap writes the hub's live heap, and its goroutines.
func (p *profiler) heap(ctx context.Context, name string) {
	if p.enabled() {
		p.fetch(ctx, name+".heap.pprof", "heap")
		p.fetch(ctx, name+".goroutines.txt", "goroutine?debug=1")
	}
}

func (p *profiler) fetch(ctx context.Context, file, query string) {
	url := strings.TrimSuffix(p.hub.MetricsURL(), "/metrics") + "/debug/pprof/" + query
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		logf("profile %s: %v", file, err)
		return
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		logf("profile %s: %v", file, err)
		return
	}
	defer resp.Body.Close()
	path := filepath.Join(p.dir, file)
	err = os.MkdirAll(p.dir, 0o755)
	var out *os.File
	if err == nil {
		out, err = os.Create(path)
	}
	if err == nil {
		_, err = io.Copy(out, resp.Body)
		err = errors.Join(err, out.Close())
	}
	if err != nil {
		logf("profile %s: %v", file, err)
		return
	}
	logf("profile written: %s (go tool pprof -top %s)", path, path)
}

// requestCounts reads the hub's API requests per controller, method and
// (when not a success) code.
func (p *profiler) requestCounts() map[string]float64 {
	if p == nil || p.hub.Pid() == 0 {
		return nil
	}
	m, err := localfleet.Scrape(p.hub.MetricsURL())
	if err != nil {
		logf("scraping the hub: %v", err)
		return nil
	}
	return countBy(m, "fleet_api_requests_total", func(l map[string]string) string {
		key := cmp.Or(l["controller"], "(informers)") + " " + l["method"]
		if !strings.HasPrefix(l["code"], "2") {
			key += " " + l["code"]
		}
		return key
	})
}

// countBy sums the series of a counter by the key their labels give.
func countBy(m localfleet.Metrics, name string, key func(labels map[string]string) string) map[string]float64 {
	out := map[string]float64{}
	if fam, ok := m[name]; ok {
		for _, s := range fam.Metric {
			labels := map[string]string{}
			for _, l := range s.Label {
				labels[l.GetName()] = l.GetValue()
			}
			out[key(labels)] += s.Counter.GetValue()
		}
	}
	return out
}

// logRequests logs the requests made between two counts, per placement.
func logRequests(before, after map[string]float64, placements int) {
	keys := make([]string, 0, len(after))
	for k := range after {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if d := after[k] - before[k]; d > 0 {
			logf("hub API requests per placement: %-40s %8.1f", k, d/float64(placements))
		}
	}
}

// apiserverRequests reads the hub API server's requests per verb, resource
// and subresource, from all clients.
func (p *profiler) apiserverRequests() map[string]float64 {
	return countBy(p.apiserverMetrics(), "apiserver_request_total", func(l map[string]string) string {
		key := "apiserver " + l["verb"] + " " + l["resource"]
		if l["subresource"] != "" {
			key += "/" + l["subresource"]
		}
		return key
	})
}

// apiserverMetrics scrapes the hub API server's own /metrics, as the shard
// admin; nil for an external hub or when the scrape fails.
func (p *profiler) apiserverMetrics() localfleet.Metrics {
	if p == nil || p.hub.Pid() == 0 {
		return nil
	}
	cfg, err := p.hub.ShardAdmin("root")
	if err != nil {
		return nil
	}
	c, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil
	}
	m, err := localfleet.ScrapeWith(c, huburl.Base(cfg.Host)+"/metrics")
	if err != nil {
		logf("reading the hub API server's metrics: %v", err)
		return nil
	}
	return m
}
