// Package metrics serves the Prometheus metrics of the hub and the syncer
// (and, when asked, Go's pprof profiles) and counts the API requests each
// controller makes. Metrics register with controller-runtime's registry, so
// its reconcile and workqueue metrics are served beside ours.
package metrics

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/pflag"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// ServerOptions say where metrics are served.
type ServerOptions struct {
	// BindAddress is host:port of the plain-HTTP metrics listener; "0" or
	// empty turns it off.
	BindAddress string
	// Profiling also serves /debug/pprof/ on that listener.
	Profiling bool
}

// AddFlags adds --metrics-bind-address and --profiling.
func (o *ServerOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.BindAddress, "metrics-bind-address", o.BindAddress, "host:port the Prometheus metrics are served on at /metrics (plain HTTP); 0 turns them off")
	fs.BoolVar(&o.Profiling, "profiling", o.Profiling, "also serve Go pprof profiles at /debug/pprof/ on the metrics address (unauthenticated: bind it to a private address)")
}

// Serve starts listening and serves in the background until ctx ends. A
// listener that cannot be opened is an error here, not later in a log. It
// returns the address actually bound ("" when turned off). /metrics serves
// controller-runtime's registry and the extra gatherers.
func Serve(ctx context.Context, o ServerOptions, log logr.Logger, extra ...prometheus.Gatherer) (string, error) {
	if o.BindAddress == "" || o.BindAddress == "0" {
		return "", nil
	}
	ln, err := net.Listen("tcp", o.BindAddress)
	if err != nil {
		return "", fmt.Errorf("serving metrics on %s: %w (choose another --metrics-bind-address, or 0 to turn metrics off)", o.BindAddress, err)
	}
	srv := &http.Server{Handler: handler(o.Profiling, append(prometheus.Gatherers{ctrlmetrics.Registry}, extra...)), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error(err, "metrics server stopped")
		}
	}()
	addr := ln.Addr().String()
	log.Info("serving metrics", "address", addr, "profiling", o.Profiling)
	return addr, nil
}

func handler(profiling bool, gatherers prometheus.Gatherers) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(gatherers, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}))
	if profiling {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	return mux
}
