// Package agent wires the syncer: a controller manager against the member's
// namespace in the hub's platform workspace (and, on a hub of several
// shards, in each further shard's home of Work), and a client and watch
// cache for the member cluster. All connections are outbound from the
// member's side.
package agent

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/config/crds"
	"github.com/fleetplane/fleetplane/internal/workhomes"
	"github.com/fleetplane/fleetplane/syncer/credential"
	"github.com/fleetplane/fleetplane/syncer/homes"
	"github.com/fleetplane/fleetplane/syncer/membership"
	"github.com/fleetplane/fleetplane/syncer/properties"
	"github.com/fleetplane/fleetplane/syncer/workapplier"
)

// Options configure a syncer.
type Options struct {
	// Hub points at the hub's platform workspace (…/clusters/root:fleet).
	Hub *rest.Config
	// Member is the member cluster.
	Member *rest.Config
	// MemberName is the name of the MemberCluster on the hub.
	MemberName string
	// Properties collects the member's properties.
	Properties properties.Provider
}

// LeaseName is the lease, in fleet-system on the member cluster, that the
// member's active syncer holds.
const LeaseName = "fleet-syncer"

// hubConfig makes the hub connection renew its own token when it
// authenticates with a bound service-account token (as join issues), starting
// from the newest token stored on the member. Any other credential is used as
// it is.
func hubConfig(ctx context.Context, cfg *rest.Config, member client.Client) (*rest.Config, error) {
	cfg = rest.CopyConfig(cfg)
	token, err := credential.Parse(cfg.BearerToken)
	if err != nil {
		ctrl.LoggerFrom(ctx).Info("the hub credential is not renewed", "reason", err.Error())
		return cfg, nil
	}
	store := credential.Store{Member: member}
	if err := store.Load(ctx, token); err != nil {
		return nil, err
	}
	token.Authenticate(cfg)
	hub, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	go token.Renew(ctx, hub, store)
	return cfg, nil
}

// placedSelector selects the member objects placements manage.
var placedSelector = labels.SelectorFromSet(labels.Set{placementv1beta1.PlacedLabel: "true"})

// cacheSyncTimeout is long: while the hub is unreachable the syncer waits
// (and changes nothing on the member) rather than give up.
const cacheSyncTimeout = time.Hour

// Run runs the syncer until ctx ends or it fails; what it started in the
// background stops with it.
func Run(ctx context.Context, opts Options) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	scheme, err := newScheme()
	if err != nil {
		return err
	}
	namespace := fmt.Sprintf(clusterv1beta1.NamespaceNameFormat, opts.MemberName)
	log := ctrl.LoggerFrom(ctx).WithValues("member", opts.MemberName)

	direct, err := client.New(opts.Member, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	if err := installAppliedWorkCRD(ctx, direct); err != nil {
		return err
	}
	// Nothing the syncer does reads managed fields: its caches keep none.
	// They hold what placements put on the member, not all the member holds
	// of the kinds they place (every ConfigMap, say): objects a placement
	// manages carry the placed label, and the syncer's own AppliedWorks
	// (whose kind the cache maps when it is made: it comes after the CRD),
	// and the member's Warning events.
	member, err := cluster.New(opts.Member, func(o *cluster.Options) {
		o.Scheme = scheme
		o.Cache.DefaultTransform = cache.TransformStripManagedFields()
		o.Cache.DefaultLabelSelector = placedSelector
		o.Cache.ByObject = map[client.Object]cache.ByObject{
			&placementv1beta1.AppliedWork{}: {Label: labels.Everything()},
			// Warnings about placed objects, and the pods they run, are
			// reported with their Works.
			&corev1.Event{}: {Label: labels.Everything(), Field: fields.OneTermEqualSelector("type", corev1.EventTypeWarning)},
		}
	})
	if err != nil {
		return fmt.Errorf("connecting to the member cluster: %w", err)
	}
	hub, err := hubConfig(ctx, opts.Hub, direct)
	if err != nil {
		return err
	}

	// One syncer per member applies: a second one (a restart that overlaps,
	// or a copy started by mistake) waits for the lease in fleet-system on
	// the member cluster it would apply to. The lease lives on the member,
	// not the hub: renewed every few seconds by every syncer, it would be
	// the hub's largest write load at a thousand members. Losing it (the
	// member's API server unreachable for longer than the renew deadline)
	// stops the controllers; the syncer then starts over and waits for it
	// again, changing nothing on the member meanwhile.
	if err := direct.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: clusterv1beta1.FleetSystemNamespace}}); client.IgnoreAlreadyExists(err) != nil {
		return fmt.Errorf("creating namespace %s on the member cluster for the syncer's lease: %w", clusterv1beta1.FleetSystemNamespace, err)
	}
	mgr, err := ctrl.NewManager(hub, ctrl.Options{
		Scheme: scheme,
		Logger: log,
		Cache: cache.Options{DefaultNamespaces: map[string]cache.Config{namespace: {}},
			DefaultTransform: cache.TransformStripManagedFields(),
			// Of the Secrets in its namespace, the syncer reads those
			// naming the shards' homes of Work.
			ByObject: map[client.Object]cache.ByObject{&corev1.Secret{}: {Label: workhomes.Selector()}}},
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		// A syncer that lost its lease runs again in the same process, with
		// controllers of the same names.
		Controller:                    config.Controller{CacheSyncTimeout: cacheSyncTimeout, SkipNameValidation: ptr.To(true)},
		LeaderElection:                true,
		LeaderElectionID:              LeaseName,
		LeaderElectionNamespace:       clusterv1beta1.FleetSystemNamespace,
		LeaderElectionResourceLock:    "leases",
		LeaderElectionReleaseOnCancel: true,
		LeaderElectionConfig:          opts.Member,
	})
	if err != nil {
		return fmt.Errorf("connecting to the hub: %w", err)
	}
	if err := mgr.Add(member); err != nil {
		return err
	}

	startErr := opts.Properties.Start(ctx, opts.Member)
	if startErr != nil {
		log.Error(startErr, "property provider did not start; heartbeats go on without properties")
	}
	var changes <-chan struct{}
	if n, ok := opts.Properties.(interface{ NamespacesChanged() <-chan struct{} }); ok {
		changes = n.NamespacesChanged()
	}
	kinds := workapplier.NewKinds()
	// On a hub of several shards, each further shard's Work is applied
	// by an applier of its own, next to root:fleet's.
	shards := &homes.Runner{Root: opts.Hub, Scheme: scheme, Member: member, Direct: direct, MemberName: opts.MemberName, Namespace: namespace, Kinds: kinds}
	if err := shards.SetupWithManager(ctx, mgr); err != nil {
		return err
	}
	if err := (&membership.Reconciler{
		Hub: mgr.GetClient(), Homes: shards.Clients, MemberName: opts.MemberName, Namespace: namespace,
		Properties: opts.Properties, ProviderStartErr: startErr, Changes: changes,
	}).SetupWithManager(mgr); err != nil {
		return err
	}
	if err := (&workapplier.Reconciler{
		Hub: mgr.GetClient(), HubReader: mgr.GetAPIReader(), Member: member, MemberName: opts.MemberName, Namespace: namespace, Kinds: kinds,
	}).SetupWithManager(mgr); err != nil {
		return err
	}
	log.Info("syncer starting", "hub", opts.Hub.Host, "namespace", namespace)
	return mgr.Start(ctx)
}

func newScheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme, clusterv1beta1.AddToScheme, placementv1beta1.AddToScheme} {
		if err := add(s); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// installAppliedWorkCRD makes sure the member serves AppliedWork, the record
// of what the syncer applied, and waits until it is established.
func installAppliedWorkCRD(ctx context.Context, c client.Client) error {
	want, err := crds.AppliedWork()
	if err != nil {
		return err
	}
	existing := &apiextensionsv1.CustomResourceDefinition{}
	err = c.Get(ctx, client.ObjectKeyFromObject(want), existing)
	switch {
	case client.IgnoreNotFound(err) != nil:
		return fmt.Errorf("reading the AppliedWork CRD on the member cluster: %w", err)
	case err != nil:
		if err := c.Create(ctx, want); err != nil {
			return fmt.Errorf("installing the AppliedWork CRD on the member cluster: %w", err)
		}
	default:
		existing.Spec = want.Spec
		if err := c.Update(ctx, existing); err != nil {
			return fmt.Errorf("updating the AppliedWork CRD on the member cluster: %w", err)
		}
	}
	return waitEstablished(ctx, c, want.Name)
}

func waitEstablished(ctx context.Context, reader client.Reader, name string) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := reader.Get(ctx, client.ObjectKey{Name: name}, crd); err == nil {
			for _, c := range crd.Status.Conditions {
				if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
					return nil
				}
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the AppliedWork CRD was not established on the member cluster: %w", ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}
