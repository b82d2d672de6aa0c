package app

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"time"

	apisv1alpha1 "github.com/kcp-dev/kcp/sdk/apis/apis/v1alpha1"
	apisv1alpha2 "github.com/kcp-dev/kcp/sdk/apis/apis/v1alpha2"
	corev1alpha1 "github.com/kcp-dev/kcp/sdk/apis/core/v1alpha1"
	kcptenancyv1alpha1 "github.com/kcp-dev/kcp/sdk/apis/tenancy/v1alpha1"
	"github.com/kcp-dev/logicalcluster/v3"
	"github.com/kcp-dev/multicluster-provider/apiexport"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	inventoryv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	tenancyv1alpha1 "github.com/fleetplane/fleetplane/apis/tenancy/v1alpha1"
	fleetconfig "github.com/fleetplane/fleetplane/config/fleet"
	"github.com/fleetplane/fleetplane/controllers/clustergrant"
	"github.com/fleetplane/fleetplane/controllers/clusterprofile"
	"github.com/fleetplane/fleetplane/controllers/common/intern"
	"github.com/fleetplane/fleetplane/controllers/common/placements"
	"github.com/fleetplane/fleetplane/controllers/common/works"
	"github.com/fleetplane/fleetplane/controllers/eviction"
	"github.com/fleetplane/fleetplane/controllers/membercluster"
	"github.com/fleetplane/fleetplane/controllers/override"
	"github.com/fleetplane/fleetplane/controllers/placement"
	"github.com/fleetplane/fleetplane/controllers/resourcechange"
	"github.com/fleetplane/fleetplane/controllers/rollout"
	"github.com/fleetplane/fleetplane/controllers/scheduler"
	"github.com/fleetplane/fleetplane/controllers/scheduler/profile"
	"github.com/fleetplane/fleetplane/controllers/updaterun"
	"github.com/fleetplane/fleetplane/controllers/workgenerator"
	"github.com/fleetplane/fleetplane/controllers/workloadreport"
	"github.com/fleetplane/fleetplane/internal/workhomes"
	"github.com/fleetplane/fleetplane/metrics"
	"github.com/fleetplane/fleetplane/workspaces/bootstrap"
	"github.com/fleetplane/fleetplane/workspaces/clients"
	"github.com/fleetplane/fleetplane/workspaces/release"
	"github.com/fleetplane/fleetplane/workspaces/teamadmission"
	"github.com/fleetplane/fleetplane/workspaces/tenancy"
	"github.com/fleetplane/fleetplane/workspaces/usage"
)

// returnMemoryAfter is how long after the last team workspace went away the
// hub gives the memory it freed back to the operating system
// (release.Manager): kcp drops a workspace's idle clients one to two
// minutes after it went.
const returnMemoryAfter = 3 * time.Minute

// controllerOptions are the hub controllers' settings.
type controllerOptions struct {
	UnhealthyThreshold time.Duration
	ForceDeleteWait    time.Duration
	// TeamReservedNamespaces are member namespaces team placements may not
	// touch, beyond teampolicy.ReservedNamespaces.
	TeamReservedNamespaces []string
	// UnservedKindGrace is how long a placement keeps its last resource
	// snapshot while a kind it selected is not served by its workspace.
	UnservedKindGrace time.Duration
	// TeamLimits are the limits of a team no grant sets.
	TeamLimits tenancy.Limits
	// Usage counts what the workspaces store (the server runs it).
	Usage *usage.Meter
	// WorkloadReports runs the workload report controllers.
	WorkloadReports bool
	// HoldsFleet says that this shard holds root:fleet and runs its own
	// controllers (member clusters, grants); every shard runs the
	// workspace-aware ones for the workspaces it holds.
	HoldsFleet bool
	// OtherShardsKubeconfig, on a hub of several shards, reaches every
	// shard through the front-proxy; the controllers read the workspaces
	// above this shard's there.
	OtherShardsKubeconfig string
	// WorkHome, on a shard other than root, is the logical cluster of
	// its works workspace, where it keeps the Work of the team workspaces
	// it holds (see bootstrap.WorkHome); empty keeps it in root:fleet.
	WorkHome logicalcluster.Name
	// ShardName names this shard.
	ShardName string
}

// usagePublishInterval is how often each team's usage shown on its
// workspace is brought up to date (written only when it changed).
const usagePublishInterval = 15 * time.Second

func defaultControllerOptions() controllerOptions {
	return controllerOptions{
		UnhealthyThreshold: membercluster.DefaultUnhealthyThreshold,
		ForceDeleteWait:    membercluster.DefaultForceDeleteWait,
		TeamLimits:         tenancy.DefaultLimits,
		Usage:              usage.NewMeter(),
		WorkloadReports:    true,
		HoldsFleet:         true,
	}
}

func hubScheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		clientgoscheme.AddToScheme, clusterv1beta1.AddToScheme, placementv1beta1.AddToScheme, tenancyv1alpha1.AddToScheme,
		corev1alpha1.AddToScheme, kcptenancyv1alpha1.AddToScheme, apisv1alpha1.AddToScheme, apisv1alpha2.AddToScheme, inventoryv1alpha1.AddToScheme,
	} {
		if err := add(s); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// cacheTransform is what the hub's caches do to an object before they store
// it: nothing the controllers do reads managed fields, so they keep none,
// and what objects repeat is shared (see intern).
func cacheTransform(obj any) (any, error) {
	obj, err := cache.TransformStripManagedFields()(obj)
	if err != nil {
		return nil, err
	}
	return intern.Transform(obj)
}

// transformCached gives the informers of objs in the provider's wildcard
// cache the hub's cache transform: the provider builds that cache without
// one. It runs before the cache starts, the last moment an informer takes a
// transform.
func transformCached(wildcard cache.Cache, objs ...client.Object) error {
	informers, ok := wildcard.(interface {
		GetSharedInformer(runtime.Object) (toolscache.SharedIndexInformer, schema.GroupVersionKind, meta.RESTScopeName, error)
	})
	if !ok {
		return fmt.Errorf("the placement API's cache (%T) does not give out its informers", wildcard)
	}
	for _, o := range objs {
		inf, gvk, _, err := informers.GetSharedInformer(o)
		if err != nil {
			return fmt.Errorf("caching %T: %w", o, err)
		}
		if err := inf.SetTransform(cacheTransform); err != nil {
			return fmt.Errorf("caching %s: %w", gvk.Kind, err)
		}
	}
	return nil
}

// startControllers runs the hub's controllers until ctx ends: the platform
// workspace's own (member clusters, grants) where this shard holds it, and
// the workspace-aware ones that serve placements in every workspace of this
// shard binding the placement API. loopback reaches this shard, fleet the
// shard that holds root:fleet (the same on the root shard). It gives the
// team admission its rules, and returns once they are set up; errors
// afterwards are logged.
func startControllers(ctx context.Context, loopback, fleet *rest.Config, opts controllerOptions, teams *teamadmission.Plugin) error {
	scheme, err := hubScheme()
	if err != nil {
		return err
	}
	logger := klog.FromContext(ctx).WithName("controllers")
	ctrl.SetLogger(logger)
	loopback = rest.CopyConfig(loopback)
	metrics.CountRequests(loopback, "hub")
	fleetCfg := inFleet(fleet)
	metrics.CountRequests(fleetCfg, "hub")
	fleetCache := cache.Options{DefaultTransform: cacheTransform}
	if opts.WorkHome != "" {
		// Of root:fleet's Secrets, this shard writes and reads its
		// homes' (WorkHomeReconciler).
		fleetCache.ByObject = map[client.Object]cache.ByObject{&corev1.Secret{}: {Label: workhomes.Selector()}}
	}
	mgr, err := ctrl.NewManager(fleetCfg, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Logger:                 logger,
		Cache:                  fleetCache,
	})
	if err != nil {
		return fmt.Errorf("creating the controller manager for %s: %w", tenancyv1alpha1.FleetWorkspace, err)
	}
	home, err := workHome(loopback, mgr, scheme, opts)
	if err != nil {
		return err
	}
	vwCfg, err := placementVirtualWorkspace(ctx, loopback, fleetCfg, scheme)
	if err != nil {
		return err
	}
	provider, err := apiexport.New(vwCfg, apiexport.Options{Scheme: scheme})
	if err != nil {
		return fmt.Errorf("watching the workspaces that bind %s: %w", fleetconfig.PlacementExport, err)
	}
	if err := transformCached(provider.GetWildcard(), &placementv1beta1.ClusterResourceBinding{}, &placementv1beta1.ResourceBinding{},
		&placementv1beta1.ClusterResourcePlacement{}, &placementv1beta1.ResourcePlacement{}); err != nil {
		return err
	}
	mcMgr, err := mcmanager.WithMultiCluster(mgr, provider)
	if err != nil {
		return err
	}
	if err := placements.AddIndexes(ctx, mcMgr.GetFieldIndexer()); err != nil {
		return err
	}
	if err := works.Index(ctx, home.GetFieldIndexer()); err != nil {
		return err
	}
	workspaces := clients.NewFactory(loopback, scheme)
	if opts.OtherShardsKubeconfig != "" {
		everyShard, err := clientcmd.BuildConfigFromFlags("", opts.OtherShardsKubeconfig)
		if err != nil {
			return fmt.Errorf("reading the kubeconfig of the front-proxy %s: %w", opts.OtherShardsKubeconfig, err)
		}
		metrics.CountRequests(everyShard, "hub")
		workspaces.WithOtherShards(clients.NewFactory(everyShard, scheme))
	}
	rules := tenancy.AdmissionRules{Workspaces: workspaces, Grants: tenancy.Grants{Reader: mgr.GetAPIReader()},
		CachedGrants: tenancy.Grants{Reader: mgr.GetClient()}, Meter: opts.Usage, Defaults: opts.TeamLimits}
	teams.SetRules(rules)
	go func() {
		_ = (&tenancy.UsagePublisher{Rules: rules, Interval: usagePublishInterval}).Start(ctx)
	}()
	changes := resourcechange.New(mcMgr, workspaces.APIsChanged)
	if opts.HoldsFleet {
		if err := setupFleetControllers(mgr, opts); err != nil {
			return err
		}
	}
	if err := setupControllers(mcMgr, home, workspaces, opts, changes); err != nil {
		return err
	}
	profiles := &clusterprofile.Reconciler{Fleet: mgr.GetClient(), Workspaces: workspaces, Shard: loopback}
	if err := profiles.SetupWithManager(mgr); err != nil {
		return err
	}
	go func() {
		if err := changes.Start(ctx, loopback, mgr.GetAPIReader(), fleetconfig.WorkloadsExport, fleetconfig.PlacementExport); err != nil {
			logger.Error(err, "resource change detection did not start; placements only follow their own changes")
		}
	}()
	go func() {
		released := &release.Manager{Manager: mcMgr, Wildcard: provider.GetWildcard(),
			Forget:            []func(logicalcluster.Name){workspaces.Forget, changes.Forget},
			ReturnMemoryAfter: returnMemoryAfter}
		if err := provider.Run(ctx, released); err != nil {
			logger.Error(err, "workspace provider stopped")
		}
	}()
	go func() {
		if err := mcMgr.Start(ctx); err != nil {
			logger.Error(err, "hub controllers stopped")
		}
	}()
	return nil
}

// workHome is where this shard keeps Work: root:fleet (the manager's
// cluster), or, on a shard other than root, its works workspace, whose
// cache and client then run with mgr and whose members' places there a
// WorkHomeReconciler keeps.
func workHome(loopback *rest.Config, mgr ctrl.Manager, scheme *runtime.Scheme, opts controllerOptions) (cluster.Cluster, error) {
	if opts.WorkHome == "" {
		return mgr, nil
	}
	cfg := rest.CopyConfig(loopback)
	cfg.Host += opts.WorkHome.Path().RequestPath()
	home, err := cluster.New(cfg, func(o *cluster.Options) {
		o.Scheme = scheme
		o.Cache.DefaultTransform = cacheTransform
	})
	if err != nil {
		return nil, fmt.Errorf("connecting to this shard's works workspace %s: %w", opts.WorkHome, err)
	}
	if err := mgr.Add(home); err != nil {
		return nil, err
	}
	homes := &membercluster.WorkHomeReconciler{Fleet: mgr.GetClient(), Home: home, Shard: opts.ShardName, Cluster: opts.WorkHome.String()}
	return home, homes.SetupWithManager(mgr)
}

// inFleet is cfg at root:fleet.
func inFleet(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.Host += tenancyv1alpha1.FleetWorkspace.RequestPath()
	return cfg
}

// setupFleetControllers registers the controllers of root:fleet's own
// objects, which the shard that holds it runs alone: member clusters and
// their heartbeats, and grants.
func setupFleetControllers(local ctrl.Manager, opts controllerOptions) error {
	mc := &membercluster.Reconciler{
		Client:             local.GetClient(),
		Recorder:           local.GetEventRecorderFor(membercluster.ControllerName),
		UnhealthyThreshold: opts.UnhealthyThreshold,
		ForceDeleteWait:    opts.ForceDeleteWait,
	}
	if err := mc.SetupWithManager(local); err != nil {
		return err
	}
	ctrlmetrics.Registry.MustRegister(&membercluster.HeartbeatCollector{Reader: local.GetCache(), Clock: mc.Clock})
	return (&clustergrant.Reconciler{Client: local.GetClient()}).SetupWithManager(local)
}

func setupControllers(mgr mcmanager.Manager, home cluster.Cluster, workspaces *clients.Factory, opts controllerOptions, changes *resourcechange.Detector) error {
	local := mgr.GetLocalManager()
	if err := (&eviction.Reconciler{Manager: mgr, Workspaces: workspaces}).SetupWithManager(mgr); err != nil {
		return err
	}
	sched := profile.NewDefaultFramework()
	for _, namespaced := range []bool{false, true} {
		if err := (&override.Reconciler{Manager: mgr, Workspaces: workspaces, Namespaced: namespaced}).SetupWithManager(mgr); err != nil {
			return err
		}
		scope := placements.Scope{Namespaced: namespaced}
		if err := (&placement.Reconciler{Manager: mgr, Workspaces: workspaces, Scope: scope, ResourceEpochs: changes.Epoch,
			TeamReservedNamespaces: opts.TeamReservedNamespaces, UnservedKindGrace: opts.UnservedKindGrace}).SetupWithManager(mgr, changes.Source(namespaced)); err != nil {
			return err
		}
		if err := (&scheduler.Reconciler{Manager: mgr, Framework: sched, Workspaces: workspaces, Scope: scope}).SetupWithManager(mgr); err != nil {
			return err
		}
		if err := (&rollout.Reconciler{Manager: mgr, Workspaces: workspaces, Fleet: local.GetClient(), Scope: scope}).SetupWithManager(mgr); err != nil {
			return err
		}
		if err := (&updaterun.Reconciler{Manager: mgr, Workspaces: workspaces, Fleet: local.GetClient(), Scope: scope}).SetupWithManager(mgr); err != nil {
			return err
		}
		if err := (&workgenerator.Reconciler{Manager: mgr, Fleet: local.GetClient(), Home: home, Workspaces: workspaces, Scope: scope,
			TeamReservedNamespaces: opts.TeamReservedNamespaces}).SetupWithManager(mgr); err != nil {
			return err
		}
		if !opts.WorkloadReports {
			continue
		}
		if err := (&workloadreport.Reconciler{Manager: mgr, Home: home, Workspaces: workspaces, Scope: scope}).SetupWithManager(mgr); err != nil {
			return err
		}
	}
	return nil
}

// placementVirtualWorkspace returns a config for the placement APIExport's
// virtual workspace, through which the hub sees placements of every
// workspace this shard holds; kcp publishes its path in the export's
// endpoint slice, the same on every shard. Its lists and watches across
// workspaces go directly to the shard's wildcard endpoint with the
// export's identity (directWildcard).
func placementVirtualWorkspace(ctx context.Context, loopback, fleetCfg *rest.Config, scheme *runtime.Scheme) (*rest.Config, error) {
	c, err := client.New(fleetCfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, err
	}
	endpoint, err := bootstrap.ExportEndpoint(ctx, c, fleetconfig.PlacementExport)
	if err != nil {
		return nil, err
	}
	export, err := bootstrap.ExportIdentity(ctx, c, fleetconfig.PlacementExport)
	if err != nil {
		return nil, err
	}
	u, err := servedHere(endpoint, loopback.Host)
	if err != nil {
		return nil, fmt.Errorf("the virtual workspace URL of %s: %w", fleetconfig.PlacementExport, err)
	}
	cfg := rest.CopyConfig(loopback)
	cfg.Host = u.String()
	if err := bootstrap.VirtualWorkspaceServes(ctx, cfg, placementv1beta1.GroupVersion); err != nil {
		return nil, err
	}
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return newDirectWildcard(rt, u.Path, placementv1beta1.GroupVersion.Group, export.Status.IdentityHash)
	})
	return cfg, nil
}

// servedHere is the endpoint's path at the hub's own address. The endpoint
// slice has the address the shard recorded when the hub last started: a hub
// restarted on another port read its old one there (and stopped, unable to
// connect) until kcp's controllers caught up. This process serves the
// virtual workspaces of its shard, so its loopback address is the current
// one.
func servedHere(endpoint, host string) (*url.URL, error) {
	u, err := url.Parse(endpoint)
	if err != nil {
		return nil, err
	}
	here, err := url.Parse(host)
	if err != nil {
		return nil, err
	}
	u.Scheme, u.Host = here.Scheme, here.Host
	return u, nil
}
