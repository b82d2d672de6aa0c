// Package homes runs, in a syncer, the work appliers of the shards' homes
// of Work. On a hub of several shards, each further shard keeps its teams'
// Works in a workspace of its own and names it, with a token of the
// member's identity there, in a Secret in the member's namespace of
// root:fleet (internal/workhomes). For each such Secret the syncer starts,
// once, a cache of that workspace and a work applier beside the one of
// root:fleet; it renews the token itself from then on, so that the home
// goes on applying while the root shard is down.
package homes

import (
	"context"
	"fmt"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/fleetplane/fleetplane/internal/workhomes"
	"github.com/fleetplane/fleetplane/syncer/credential"
	"github.com/fleetplane/fleetplane/syncer/workapplier"
)

// ControllerName names the controller that starts the homes.
const ControllerName = "fleet-work-homes"

// Runner starts the work applier of each home the hub names. Its
// controller runs on the syncer's manager of root:fleet, while the syncer
// holds its lease; what it starts stops with ctx.
type Runner struct {
	// Root is the syncer's config of root:fleet as it was given (before
	// its token was renewed); a home is the same server (the
	// front-proxy) at the home's workspace.
	Root   *rest.Config
	Scheme *runtime.Scheme
	// Member is the member cluster, Direct a client of it without cache
	// (for the stored tokens).
	Member     cluster.Cluster
	Direct     client.Client
	MemberName string
	Namespace  string
	// Kinds is shared with the applier of root:fleet.
	Kinds *workapplier.Kinds

	mgr     ctrl.Manager
	ctx     context.Context
	mu      sync.Mutex
	started map[string]cluster.Cluster
}

// SetupWithManager registers the controller of the homes' Secrets on mgr,
// the syncer's manager of root:fleet; the homes run until ctx ends.
func (r *Runner) SetupWithManager(ctx context.Context, mgr ctrl.Manager) error {
	r.mgr, r.ctx, r.started = mgr, ctx, map[string]cluster.Cluster{}
	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		For(&corev1.Secret{}, builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
			return o.GetLabels()[workhomes.Label] != ""
		}))).
		Complete(r)
}

// Reconcile starts the home a Secret names, unless it runs already.
func (r *Runner) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	secret := &corev1.Secret{}
	if err := r.mgr.GetClient().Get(ctx, req.NamespacedName, secret); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	home, err := workhomes.FromSecret(secret)
	if err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "ignoring a home of Work the hub named")
		return ctrl.Result{}, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.started[home.Shard]; ok {
		return ctrl.Result{}, nil
	}
	c, err := r.start(home)
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("starting the work applier of shard %s: %w", home.Shard, err)
	}
	r.started[home.Shard] = c
	ctrl.LoggerFrom(ctx).Info("applying the Work of a shard's home", "shard", home.Shard, "workspace", home.Cluster)
	return ctrl.Result{}, nil
}

// start connects to the home's workspace and runs its work applier.
func (r *Runner) start(home workhomes.Home) (cluster.Cluster, error) {
	cfg, err := r.config(home)
	if err != nil {
		return nil, err
	}
	c, err := cluster.New(cfg, func(o *cluster.Options) {
		o.Scheme = r.Scheme
		o.Cache.DefaultNamespaces = map[string]cache.Config{r.Namespace: {}}
		o.Cache.DefaultTransform = cache.TransformStripManagedFields()
	})
	if err != nil {
		return nil, err
	}
	if err := r.mgr.Add(c); err != nil {
		return nil, err
	}
	applier := &workapplier.Reconciler{Hub: c.GetClient(), HubReader: c.GetAPIReader(), Member: r.Member, MemberName: r.MemberName,
		Namespace: r.Namespace, Home: home.Shard, Membership: r.mgr.GetClient(), Kinds: r.Kinds}
	if err := applier.SetupWithHome(r.mgr, c, r.mgr.GetCache()); err != nil {
		return nil, err
	}
	return c, nil
}

// config is the root config at the home's workspace, with the home's
// token, renewed from now on, where the hub gave one (the newer one stored
// on the member, if any).
func (r *Runner) config(home workhomes.Home) (*rest.Config, error) {
	cfg := rest.CopyConfig(r.Root)
	cfg.Host = baseURL(cfg.Host) + "/clusters/" + home.Cluster
	if home.Token == "" {
		return cfg, nil
	}
	token, err := credential.Parse(home.Token)
	if err != nil {
		return nil, fmt.Errorf("the token of shard %s's home: %w", home.Shard, err)
	}
	store := credential.Store{Member: r.Direct, Name: credential.SecretName + "-" + home.Shard}
	if err := store.Load(r.ctx, token); err != nil {
		return nil, err
	}
	token.Authenticate(cfg)
	hub, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	go token.Renew(r.ctx, hub, store)
	return cfg, nil
}

// Clients are the clients of the homes started so far.
func (r *Runner) Clients() []client.Client {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]client.Client, 0, len(r.started))
	for _, c := range r.started {
		out = append(out, c.GetClient())
	}
	return out
}

// baseURL is a hub URL without its workspace path.
func baseURL(host string) string {
	if i := strings.Index(host, "/clusters/"); i >= 0 {
		return host[:i]
	}
	return host
}
