package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fleetplane/fleetplane/test/e2e/framework"
)

// profiler takes pprof profiles of an embedded hub (started with
// --profiling) into a directory.
type profiler struct {
	hub *framework.Hub
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
		p.fetch(ctx, name+".cpu.pprof", fmt.Sprintf("profile?seconds=%d", int(d.Seconds())))
	}()
	return func() { <-done }
}

// heap writes the hub's live heap.
func (p *profiler) heap(ctx context.Context, name string) {
	if p.enabled() {
		p.fetch(ctx, name+".heap.pprof", "heap")
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
	out, err := os.Create(path)
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
