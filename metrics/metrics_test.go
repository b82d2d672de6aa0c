package metrics

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

func TestRequestsCountedPerController(t *testing.T) {
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			w.WriteHeader(http.StatusConflict)
		}
	}))
	defer api.Close()
	cfg := &rest.Config{Host: api.URL}
	CountRequests(cfg, "test")
	client, err := rest.HTTPClientFor(rest.CopyConfig(cfg))
	if err != nil {
		t.Fatal(err)
	}
	do := func(ctx context.Context, method, path string) {
		req, _ := http.NewRequestWithContext(ctx, method, api.URL+path, nil)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	r := Reconciler[reconcile.Request]("fleet-test", reconcile.Func(func(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
		do(ctx, http.MethodGet, "/api/v1/namespaces")
		do(ctx, http.MethodPost, "/api/v1/namespaces")
		return reconcile.Result{}, nil
	}))
	if _, err := r.Reconcile(context.Background(), reconcile.Request{}); err != nil {
		t.Fatal(err)
	}
	do(context.Background(), http.MethodGet, "/api/v1/namespaces?watch=true")

	for _, c := range []struct {
		labels []string
		want   float64
	}{
		{[]string{"fleet-test", "test", "GET", "200"}, 1},
		{[]string{"fleet-test", "test", "POST", "409"}, 1},
		{[]string{"", "test", "WATCH", "200"}, 1},
	} {
		if got := testutil.ToFloat64(apiRequests.WithLabelValues(c.labels...)); got != c.want {
			t.Errorf("fleet_api_requests_total%v = %v, want %v", c.labels, got, c.want)
		}
	}
}

func TestServe(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if addr, err := Serve(ctx, ServerOptions{BindAddress: "0"}, logr.Discard()); err != nil || addr != "" {
		t.Fatalf("metrics turned off: got %q, %v", addr, err)
	}
	addr, err := Serve(ctx, ServerOptions{BindAddress: "127.0.0.1:0"}, logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Serve(ctx, ServerOptions{BindAddress: addr}, logr.Discard()); err == nil || !strings.Contains(err.Error(), "--metrics-bind-address") {
		t.Fatalf("a taken address: got %v, want an error naming --metrics-bind-address", err)
	}
	body := get(t, "http://"+addr+"/metrics", http.StatusOK)
	if !strings.Contains(body, "fleet_api_requests_total") && !strings.Contains(body, "go_goroutines") {
		t.Fatalf("/metrics serves no metrics:\n%s", body)
	}
	get(t, "http://"+addr+"/debug/pprof/", http.StatusNotFound)

	profiled, err := Serve(ctx, ServerOptions{BindAddress: "127.0.0.1:0", Profiling: true}, logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	get(t, "http://"+profiled+"/debug/pprof/", http.StatusOK)
}

func get(t *testing.T, url string, want int) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		t.Fatalf("GET %s: %s, want %d", url, resp.Status, want)
	}
	return string(body)
}
