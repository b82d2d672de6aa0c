// Package server runs the kcp control plane in-process: the Fleetplane hub is a
// real kcp server with embedded (or external) etcd, plus our post-start work.
package server

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/kcp-dev/embeddedetcd"
	kcpoptions "github.com/kcp-dev/kcp/cmd/kcp/options"
	"github.com/kcp-dev/kcp/pkg/admission/kubequota"
	"github.com/kcp-dev/kcp/pkg/admission/mutatingwebhook"
	"github.com/kcp-dev/kcp/pkg/admission/validatingwebhook"
	kcpfeatures "github.com/kcp-dev/kcp/pkg/features"
	kcpserver "github.com/kcp-dev/kcp/pkg/server"
	"go.etcd.io/etcd/server/v3/embed"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/admission"
	kubemutatingwebhook "k8s.io/apiserver/pkg/admission/plugin/webhook/mutating"
	"k8s.io/apiserver/pkg/registry/generic"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/client-go/rest"
	logsapiv1 "k8s.io/component-base/logs/api/v1"
	"k8s.io/klog/v2"

	"github.com/fleetplane/fleetplane/workspaces/pki"
	"github.com/fleetplane/fleetplane/workspaces/usage"
)

// Options are the hub settings a user can change; everything else keeps kcp's defaults.
type Options struct {
	// RootDir holds certificates, embedded etcd data and admin.kubeconfig.
	RootDir string
	// BindAddress is the address the API server listens on.
	BindAddress string
	// SecurePort is the HTTPS port of the API server.
	SecurePort int
	// ExternalHostname is the host name written into kubeconfigs; defaults to BindAddress.
	ExternalHostname string
	// EtcdServers, when set, replaces the embedded etcd with an external one.
	EtcdServers []string
	// EmbeddedEtcdClientPort and EmbeddedEtcdPeerPort are the embedded etcd's ports.
	EmbeddedEtcdClientPort int
	EmbeddedEtcdPeerPort   int
	// LogVerbosity is klog's -v level.
	LogVerbosity int
	// AdmissionWebhooks makes the hub call the admission webhooks that
	// workspaces configure. Off by default: kcp v0.28.1 builds a webhook
	// admission plugin, with its CEL environments, for every write, which
	// cost a third of the hub's CPU under load even with no webhook
	// configured anywhere. Fleetplane's own admission needs none (schema
	// rules and validating admission policies).
	AdmissionWebhooks bool
	// WatchCache turns on the API server's watch caches. Off (the
	// default), lists and watches are served from etcd: the hub holds no
	// decoded copy of every object and of the last 75 s of changes. With
	// 300 members and 3,000 placement-cluster pairs that is 2.65 GB of
	// memory instead of 7.4 GB, and placements become Available as fast or
	// faster (docs/performance.md).
	WatchCache bool
	// ResourceQuotas enforces ResourceQuotas in workspaces. Off (the
	// default), kcp's quota controller and quota admission do not run: kcp
	// starts both once per workspace, and the controller's event handlers
	// on every resource's informer were half of what each team workspace
	// cost the hub (docs/performance.md). Fleetplane itself sets no quotas.
	ResourceQuotas bool
	// EmbeddedEtcdDefrag defragments the embedded etcd's database when at
	// least half of its file and 32 MiB are free, with at most 256 MiB in
	// use (see defrag.go). On by default.
	EmbeddedEtcdDefrag bool
	// EtcdCompactionInterval is how often the API server compacts etcd's
	// history: each compaction drops the revisions older than the previous
	// one, so etcd keeps one to two intervals of changes, and its database
	// file grows to hold the largest history a busy spell wrote and stays
	// that size, resident as etcd maps it. Kubernetes' 5 minutes left a
	// 1.46 GB file for 1,000 placements of 100 clusters, 2 minutes (the
	// default) 1.15 GB. A watch resumed from a revision already compacted
	// lists again; with every watch given bookmarks (bookmarks.go) none had
	// to at 2 minutes either (docs/performance.md). 0 leaves etcd's history
	// uncompacted.
	EtcdCompactionInterval time.Duration
	// EtcdCompression stores objects compressed in etcd (compression.go).
	// On by default. Off, the hub stores them as the API server would and
	// still reads those it compressed before.
	EtcdCompression bool
	// EmbeddedEtcdQuotaBytes is the size of the embedded etcd's database
	// at which etcd refuses writes; 0 keeps etcd's default (2 GiB), which
	// 1,000 placements of 100 clusters come near (docs/performance.md).
	EmbeddedEtcdQuotaBytes int64
	// Uninformed are resources kcp's metadata informers leave out: kcp's
	// garbage collector, permission-claim labels and workspace mounts then
	// do not see their objects, and the hub neither lists them nor decodes
	// each of their changes once more for those informers.
	Uninformed []schema.GroupResource
	// Untracked are resources whose objects are stored without their
	// field-ownership records (untracked.go): kinds only the hub's
	// controllers and the syncers write, none of them server-side applied.
	Untracked []schema.GroupResource
	// Admission are Fleetplane's own admission plugins, run in every
	// workspace after kcp's and before the webhooks.
	Admission []AdmissionPlugin
	// Usage, when set, is run on etcd to count what each workspace
	// stores (the team limits read it).
	Usage *usage.Meter
	// Shard makes the hub one shard of a hub of several (shards.go).
	Shard ShardOptions
}

// AdmissionPlugin is an admission plugin and the name it is registered
// under.
type AdmissionPlugin struct {
	Name    string
	Factory admission.Factory
}

// DefaultOptions returns the settings `fleet-hub start` uses without flags.
func DefaultOptions() Options {
	return Options{
		RootDir:                ".fleet",
		BindAddress:            "127.0.0.1",
		SecurePort:             6443,
		EmbeddedEtcdClientPort: 2379,
		EmbeddedEtcdPeerPort:   2380,
		EmbeddedEtcdDefrag:     true,
		EtcdCompactionInterval: 2 * time.Minute,
		EtcdCompression:        true,
	}
}

// AdminKubeconfigPath is where kcp writes the admin kubeconfig for a root dir.
func AdminKubeconfigPath(rootDir string) string {
	return filepath.Join(rootDir, "admin.kubeconfig")
}

// shutdownWatchGrace is how long a stopping hub lets watches drain.
const shutdownWatchGrace = 5 * time.Second

// PostStartFunc runs once the API server serves requests. It gets a loopback
// config with full privileges; /readyz stays false until it returns, so the hub
// only reports ready when the fleet topology is in place.
type PostStartFunc func(ctx context.Context, loopback *rest.Config) error

// kcp initialises process-global state (feature gates, metrics) while building
// options; several hubs in one process must not race on it.
var globalOptionsLock sync.Mutex

// Run starts kcp and blocks until ctx is cancelled and the server has stopped.
func Run(ctx context.Context, opts Options, postStart PostStartFunc) error {
	if err := opts.Shard.Validate(); err != nil {
		return err
	}
	kcpOpts, err := kcpOptions(opts)
	if err != nil {
		return err
	}
	now := time.Now()
	if err := applyShard(kcpOpts, opts.RootDir, opts.Shard, now); err != nil {
		return err
	}
	var servingCA *pki.Authority
	if opts.Shard.Sharded() {
		if servingCA, err = opts.Shard.PKI.Authority(pki.ServingCA); err != nil {
			return err
		}
	}
	if err := logsapiv1.ValidateAndApply(kcpOpts.Server.GenericControlPlane.Logs, kcpfeatures.DefaultFeatureGate); err != nil {
		return err
	}
	rest.SetDefaultWarningHandler(rest.NoWarnings{})
	if err := ensureServingCert(&kcpOpts.Server.GenericControlPlane, append(opts.Shard.servingNames(), opts.ExternalHostname), servingCA, now); err != nil {
		return err
	}

	completed, err := kcpOpts.Complete(ctx)
	if err != nil {
		return err
	}
	if errs := completed.Validate(); len(errs) > 0 {
		return utilerrors.NewAggregate(errs)
	}
	config, err := kcpserver.NewConfig(ctx, completed.Server)
	if err != nil {
		return err
	}
	completedConfig, err := config.Complete()
	if err != nil {
		return err
	}

	// etcd gets its own context so that it stops only after the API server has
	// drained; storage decorators need it before NewServer.
	etcdCtx, stopEtcd := context.WithCancel(context.Background())
	defer stopEtcd()
	if completedConfig.EmbeddedEtcd.Config != nil {
		tuneEmbeddedEtcd(completedConfig.EmbeddedEtcd.Config.Config, opts.WatchCache)
		if err := embeddedetcd.NewServer(completedConfig.EmbeddedEtcd).Run(etcdCtx); err != nil {
			return fmt.Errorf("starting embedded etcd in %s: %w", opts.RootDir, err)
		}
		if opts.EmbeddedEtcdDefrag {
			if err := defragmentWhenMostlyFree(etcdCtx, completedConfig.EmbeddedEtcd.Config.Config, defragCheckInterval); err != nil {
				return fmt.Errorf("connecting to the embedded etcd to check its database for free pages: %w", err)
			}
		}
	}

	if opts.Usage != nil {
		client, err := dialEtcd(completedConfig.EmbeddedEtcd.Config, completed.Server.GenericControlPlane.Etcd.StorageConfig.Transport)
		if err != nil {
			return fmt.Errorf("connecting to etcd to count what workspaces store: %w", err)
		}
		defer client.Close()
		go opts.Usage.Run(etcdCtx, client, completed.Server.GenericControlPlane.Etcd.StorageConfig.Prefix)
	}

	compressed := compressedStorage(opts.EtcdCompression)
	untracked := sets.New(opts.Untracked...)
	storage := func(g generic.RESTOptionsGetter) generic.RESTOptionsGetter {
		return untrackedStorage{compressed(g), untracked}
	}
	if !opts.WatchCache {
		clients := &sharedEtcdClients{}
		defer clients.Close() // runs after the server has stopped, before etcd does
		storage = func(g generic.RESTOptionsGetter) generic.RESTOptionsGetter {
			return untrackedStorage{bookmarkingStorage{compressed(g), clients}, untracked}
		}
	}
	// Built-in resources, CRDs, custom resources, and kcp's cache server (in
	// the same etcd under /cache): every reader of etcd's values.
	completedConfig.Apis.Generic.RESTOptionsGetter = storage(completedConfig.Apis.Generic.RESTOptionsGetter)
	completedConfig.ApiExtensions.GenericConfig.RESTOptionsGetter = storage(completedConfig.ApiExtensions.GenericConfig.RESTOptionsGetter)
	completedConfig.ApiExtensions.ExtraConfig.CRDRESTOptionsGetter = storage(completedConfig.ApiExtensions.ExtraConfig.CRDRESTOptionsGetter)
	completedConfig.CacheServerStorage = storage

	s, err := kcpserver.NewServer(completedConfig)
	if err != nil {
		return err
	}
	if err := leanMetadataInformers(s, opts.Uninformed); err != nil {
		return err
	}
	err = s.AddPostStartHook("fleet-crd-establishing", func(hookCtx genericapiserver.PostStartHookContext) error {
		// Not fatal: the bootstrap reports what stays unbound.
		if err := establishStuckCRDs(hookCtx.Context, rest.CopyConfig(hookCtx.LoopbackClientConfig)); err != nil {
			klog.FromContext(ctx).Error(err, "CRDs left installing by an earlier run")
		}
		return nil
	})
	if err != nil {
		return err
	}
	if postStart != nil {
		err := s.AddPostStartHook("fleet-bootstrap", func(hookCtx genericapiserver.PostStartHookContext) error {
			if opts.Shard.Root() {
				// Root workspace types and RBAC must exist before we
				// build on them; another shard's post-start waits for
				// the root shard on its own.
				s.WaitForPhase1Finished()
			}
			return postStart(hookCtx.Context, rest.CopyConfig(hookCtx.LoopbackClientConfig))
		})
		if err != nil {
			return err
		}
	}
	klog.FromContext(ctx).Info("starting kcp", "rootDir", opts.RootDir, "address", net.JoinHostPort(opts.BindAddress, strconv.Itoa(opts.SecurePort)), "shard", kcpOpts.Server.Extra.ShardName)
	return s.Run(ctx)
}

func kcpOptions(opts Options) (*kcpoptions.Options, error) {
	bind := net.ParseIP(opts.BindAddress)
	if bind == nil {
		return nil, fmt.Errorf("--bind-address %q is not an IP address", opts.BindAddress)
	}
	globalOptionsLock.Lock()
	defer globalOptionsLock.Unlock()

	o := kcpoptions.NewOptions(opts.RootDir)
	o.Generic.RootDirectory = opts.RootDir
	cp := &o.Server.GenericControlPlane
	cp.Logs.Verbosity = logsapiv1.VerbosityLevel(opts.LogVerbosity)
	cp.SecureServing.BindAddress = bind
	cp.SecureServing.BindPort = opts.SecurePort
	cp.GenericServerRunOptions.ExternalHost = opts.ExternalHostname
	// Close open watches (every syncer holds some) on shutdown instead of
	// waiting for the request timeout: SIGTERM then stops the hub in seconds.
	cp.GenericServerRunOptions.ShutdownWatchTerminationGracePeriod = shutdownWatchGrace
	cp.Etcd.EnableWatchCache = opts.WatchCache
	cp.Etcd.StorageConfig.CompactionInterval = opts.EtcdCompactionInterval
	if len(opts.EtcdServers) > 0 {
		cp.Etcd.StorageConfig.Transport.ServerList = opts.EtcdServers
	}
	o.Server.EmbeddedEtcd.ClientPort = strconv.Itoa(opts.EmbeddedEtcdClientPort)
	o.Server.EmbeddedEtcd.PeerPort = strconv.Itoa(opts.EmbeddedEtcdPeerPort)
	o.Server.EmbeddedEtcd.QuotaBackendBytes = opts.EmbeddedEtcdQuotaBytes
	plugins := cp.Admission.GenericAdmission
	if !opts.AdmissionWebhooks {
		plugins.DisablePlugins = append(plugins.DisablePlugins, mutatingwebhook.PluginName, validatingwebhook.PluginName)
	}
	if !opts.ResourceQuotas {
		o.Server.Controllers.EnableAll = false
		o.Server.Controllers.IndividuallyEnabled = kcpControllersButQuota
		plugins.DisablePlugins = append(plugins.DisablePlugins, kubequota.PluginName)
	}
	for _, p := range opts.Admission {
		plugins.Plugins.Register(p.Name, p.Factory)
		// Every registered plugin must be in the order, here after kcp's
		// own, which kcp puts before the webhooks; a copy, as kcp's order
		// is a package variable.
		order := slices.Clone(plugins.RecommendedPluginOrder)
		at := slices.Index(order, kubemutatingwebhook.PluginName)
		if at < 0 {
			at = len(order)
		}
		plugins.RecommendedPluginOrder = slices.Insert(order, at, p.Name)
	}
	return o, nil
}

// kcpControllersButQuota are the names kcp v0.28.1 gives its optional
// controllers (pkg/server/server.go), the quota controller left out.
var kcpControllersButQuota = []string{
	"workspace-scheduler", "apibinding", "apiexport", "apisreplicateclusterrole", "apisreplicateclusterrolebinding",
	"apisreplicatelogicalcluster", "tenancyreplicatelogicalcluster", "corereplicateclusterrole", "corereplicateclusterrolebinding",
	"tenancyreplicateclusterrole", "tenancyreplicationclusterrolebinding", "apiexportendpointslice", "apibinder",
	"defaultapibindinglifecycle", "partition", "garbagecollector", "dynamicrestmapper", "cache", "cachedresourcendpointslice",
}

// embeddedEtcdSnapshotCount is how many writes the embedded etcd takes
// between snapshots. etcd keeps every raft entry since its last snapshot in
// memory; the 100,000 of etcd v3.5 (heartbeats, Work and status writes of a
// large fleet fill them in minutes) cost the hub hundreds of MB; with 10,000
// (etcd v3.6's default) an idle hub, which writes little, kept the entries
// of its start-up (the API schemas among them, ~29 MB) for hours. A
// snapshot of the embedded etcd is cheap: its data is in its database.
const embeddedEtcdSnapshotCount = 1000

// embeddedEtcdCatchUpEntries is how many raft entries etcd keeps in memory
// after a snapshot, for slow followers to catch up from (5,000 by default).
// The embedded etcd is a single member: it has no followers.
const embeddedEtcdCatchUpEntries = 100

// embeddedEtcdProgressInterval is how often the embedded etcd tells a watch
// that has seen no event where the store is: without watch caches the API
// server passes this on as a bookmark to clients that ask for them (see
// bookmarkingStorage), and a watch started again from that version makes
// etcd read back only the writes since. etcd's default is 10 minutes (15
// seconds did not do better than one minute on an idle hub).
const embeddedEtcdProgressInterval = time.Minute

func tuneEmbeddedEtcd(cfg *embed.Config, watchCache bool) {
	if !watchCache { // the caches get kcp's own setting
		cfg.ExperimentalWatchProgressNotifyInterval = embeddedEtcdProgressInterval
	}
	cfg.SnapshotCount = embeddedEtcdSnapshotCount
	cfg.SnapshotCatchUpEntries = embeddedEtcdCatchUpEntries
}
