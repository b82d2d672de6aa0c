package metrics

import (
	"context"
	"net/http"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/rest"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

var apiRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "fleet_api_requests_total",
	Help: "API requests by the controller that made them, the API server they went to (hub or member), HTTP method (WATCH for watches) and response code. Requests made outside a reconcile (informers listing and watching) have controller=\"\".",
}, []string{"controller", "target", "method", "code"})

func init() {
	ctrlmetrics.Registry.MustRegister(apiRequests)
}

type controllerKey struct{}

// WithController marks ctx as the given controller's: the API requests made
// with it are counted under that name.
func WithController(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, controllerKey{}, name)
}

func controllerOf(ctx context.Context) string {
	name, _ := ctx.Value(controllerKey{}).(string)
	return name
}

// Reconciler runs r with every reconcile's context marked as the named
// controller's.
func Reconciler[T comparable](name string, r reconcile.TypedReconciler[T]) reconcile.TypedReconciler[T] {
	return reconcile.TypedFunc[T](func(ctx context.Context, req T) (reconcile.Result, error) {
		return r.Reconcile(WithController(ctx, name), req)
	})
}

// CountRequests makes cfg's clients count their requests in
// fleet_api_requests_total under target (e.g. "hub" or "member"). Configs
// copied from cfg afterwards count too.
func CountRequests(cfg *rest.Config, target string) {
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return &counter{next: rt, target: target}
	})
}

type counter struct {
	next   http.RoundTripper
	target string
}

func (c *counter) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.next.RoundTrip(req)
	code := "error"
	if err == nil {
		code = strconv.Itoa(resp.StatusCode)
	}
	method := req.Method
	if method == http.MethodGet && req.URL.Query().Get("watch") == "true" {
		method = "WATCH"
	}
	apiRequests.WithLabelValues(controllerOf(req.Context()), c.target, method, code).Inc()
	return resp, err
}
