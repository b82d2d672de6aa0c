// Package app is the fleet-hub command line.
package app

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/controllers/placement"
	"github.com/fleetplane/fleetplane/internal/binpages"
	"github.com/fleetplane/fleetplane/internal/gcpace"
	"github.com/fleetplane/fleetplane/metrics"
	"github.com/fleetplane/fleetplane/workspaces/bootstrap"
	"github.com/fleetplane/fleetplane/workspaces/memberdefaults"
	"github.com/fleetplane/fleetplane/workspaces/server"
	"github.com/fleetplane/fleetplane/workspaces/teamadmission"
)

// NewCommand returns the fleet-hub root command.
func NewCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:           "fleet-hub",
		Short:         "The Fleetplane hub: multi-tenant multi-cluster placement on kcp workspaces",
		SilenceUsage:  true,
		SilenceErrors: false,
	}
	cmd.AddCommand(newStartCommand(), newFrontProxyCommand())
	return cmd
}

// printNextSteps tells a user who just started the hub how to use it.
func printNextSteps(w io.Writer, opts server.Options) {
	kubeconfig, _ := filepath.Abs(server.AdminKubeconfigPath(opts.RootDir))
	binDir := "bin"
	if exe, err := os.Executable(); err == nil {
		binDir = filepath.Dir(exe)
	}
	fmt.Fprintf(w, `
Fleetplane hub is ready (state in %s). In another shell:

  export KUBECONFIG=%s
  export PATH=%s:$PATH
  kubectl ws tree                                   # the workspaces
  kubectl ws :root:teams && kubectl ws create team-a --enter
  kubectl apply -f config/samples/team-a/           # a Deployment and its placements (docs/placement.md)
  kubectl get crp,rp -A

Stop the hub with Ctrl-C; its state survives a restart.
`, opts.RootDir, kubeconfig, binDir)
}

// uninformedByKcp are the fleet's resources kcp's metadata informers need
// not see; no export claims them (kcp labels claimed objects from these
// informers), so only kcp's garbage collector would read them there. Works
// carry no owner references and own nothing: the work generator deletes
// them, or their member namespace's deletion does. A binding's only owner
// is its placement, whose scheduler-cleanup finalizer deletes the bindings
// and stays until they are gone, so the collector's cascade has nothing
// left to do (and with a placement forced away past its finalizer, the
// bindings and what they placed stay rather than go). Left out, a
// restarted hub lists each (100,000 of each at 1,000 placements of 100
// clusters) once less, and the collector no longer checks the owner of
// every binding the scheduler creates.
var uninformedByKcp = []schema.GroupResource{
	placementv1beta1.GroupVersion.WithResource("works").GroupResource(),
	placementv1beta1.GroupVersion.WithResource("clusterresourcebindings").GroupResource(),
	placementv1beta1.GroupVersion.WithResource("resourcebindings").GroupResource(),
}

// untrackedFields are the kinds only the hub's controllers and the
// syncers write, stored without the API server's field-ownership records
// (workspaces/server/untracked.go). Objects users write (placements,
// MemberClusters, overrides) keep theirs.
var untrackedFields = []schema.GroupResource{
	{Group: placementv1beta1.GroupVersion.Group, Resource: "works"},
	{Group: placementv1beta1.GroupVersion.Group, Resource: "clusterresourcebindings"},
	{Group: placementv1beta1.GroupVersion.Group, Resource: "resourcebindings"},
	{Group: placementv1beta1.GroupVersion.Group, Resource: "clusterschedulingpolicysnapshots"},
	{Group: placementv1beta1.GroupVersion.Group, Resource: "schedulingpolicysnapshots"},
	{Group: placementv1beta1.GroupVersion.Group, Resource: "clusterresourcesnapshots"},
	{Group: placementv1beta1.GroupVersion.Group, Resource: "resourcesnapshots"},
	{Group: clusterv1beta1.GroupVersion.Group, Resource: "internalmemberclusters"},
}

func newStartCommand() *cobra.Command {
	opts := server.DefaultOptions()
	opts.Uninformed = uninformedByKcp
	opts.Untracked = untrackedFields
	teams := teamadmission.New()
	opts.Admission = append(opts.Admission, server.AdmissionPlugin{Name: teamadmission.PluginName, Factory: teams.Factory},
		server.AdmissionPlugin{Name: memberdefaults.PluginName, Factory: memberdefaults.New().Factory})
	ctrlOpts := defaultControllerOptions()
	opts.Usage = ctrlOpts.Usage
	metricsOpts := metrics.ServerOptions{BindAddress: ":8080"}
	pacer := gcpace.Pacer{Min: 25, Max: 100, QuietMax: 50, Interval: time.Minute}
	var boardOpts boardOptions
	cmd := &cobra.Command{
		Use:   "start",
		Short: "Start the hub and bootstrap the fleet workspaces",
		Long: `Start the hub: a kcp control plane with embedded etcd (or --etcd-servers),
bootstrapped with the workspaces root:fleet (platform admins) and root:teams
(team workspaces), and the fleet and workload APIs. State lives in --root-dir;
a restart keeps it. The admin kubeconfig is written to <root-dir>/admin.kubeconfig.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			if _, err := metrics.Serve(ctx, metricsOpts, klog.FromContext(ctx).WithName("metrics"), controllerWorkqueues{}); err != nil {
				return err
			}
			if pacer.Interval > 0 {
				go pacer.Run(ctx, klog.FromContext(ctx).WithName("gcpace"))
			}
			go binpages.ReleaseEvery(ctx, time.Minute, klog.FromContext(ctx).WithName("binpages"))
			ctrlOpts.OtherShardsKubeconfig = opts.Shard.FrontProxyKubeconfig(opts.RootDir)
			if !opts.Shard.Root() {
				klog.FromContext(ctx).Info("starting a shard of a hub of several", "shard", opts.Shard.Name, "rootShard", opts.Shard.RootShardURL)
				ctrlOpts.HoldsFleet, ctrlOpts.ShardName = false, opts.Shard.Name
				return server.Run(ctx, opts, func(ctx context.Context, loopback *rest.Config) error {
					if err := startShardControllers(ctx, loopback, server.RootShardKubeconfig(opts.RootDir), ctrlOpts, teams); err != nil {
						return err
					}
					return startBoard(ctx, opts, boardOpts)
				})
			}
			return server.Run(ctx, opts, func(ctx context.Context, loopback *rest.Config) error {
				if err := bootstrap.Run(ctx, loopback); err != nil {
					return err
				}
				if err := startControllers(ctx, loopback, loopback, ctrlOpts, teams); err != nil {
					return err
				}
				if err := startBoard(ctx, opts, boardOpts); err != nil {
					return err
				}
				printNextSteps(cmd.OutOrStdout(), opts)
				return nil
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.RootDir, "root-dir", opts.RootDir, "directory for the hub's state: certificates, embedded etcd data, admin.kubeconfig")
	f.StringVar(&opts.BindAddress, "bind-address", opts.BindAddress, "IP address the API server listens on")
	f.IntVar(&opts.SecurePort, "secure-port", opts.SecurePort, "HTTPS port of the API server")
	f.StringVar(&opts.ExternalHostname, "external-hostname", opts.ExternalHostname, "host name clients use to reach the hub (written into kubeconfigs); defaults to --bind-address")
	f.StringSliceVar(&opts.EtcdServers, "etcd-servers", opts.EtcdServers, "external etcd endpoints (e.g. http://127.0.0.1:2379); empty runs an embedded etcd in --root-dir")
	f.IntVar(&opts.EmbeddedEtcdClientPort, "embedded-etcd-client-port", opts.EmbeddedEtcdClientPort, "client port of the embedded etcd")
	f.IntVar(&opts.EmbeddedEtcdPeerPort, "embedded-etcd-peer-port", opts.EmbeddedEtcdPeerPort, "peer port of the embedded etcd")
	f.StringVar(&opts.Shard.Name, "shard-name", server.RootShard, "name of this shard in a hub of several (docs/hub.md); the shard named root holds the root, fleet and teams workspaces")
	f.StringVar((*string)(&opts.Shard.PKI), "shared-pki-dir", "", "directory of the authorities and service account key that every shard and the front-proxy of a hub of several share (created by the first to start); empty runs a hub of one shard")
	f.StringVar(&opts.Shard.RootShardURL, "root-shard-url", "", "URL of the root shard (a shard other than root reads what every shard shares there)")
	f.StringVar(&opts.Shard.BaseURL, "shard-base-url", "", "URL at which the other shards and the front-proxy reach this shard (default https://<external-hostname>:<secure-port>)")
	f.StringVar(&opts.Shard.ExternalURL, "external-url", "", "URL of the front-proxy through which clients reach every shard")
	f.DurationVar(&ctrlOpts.UnhealthyThreshold, "cluster-unhealthy-threshold", ctrlOpts.UnhealthyThreshold, "how long a member cluster may miss heartbeats before it is reported unhealthy and gets no new placements (it keeps what it runs); never less than three of the member's heartbeat periods")
	f.StringSliceVar(&ctrlOpts.TeamReservedNamespaces, "team-reserved-namespaces", nil, "member namespaces (patterns such as platform-*) that team workspaces may never place into, besides default, kube-*, fleet-* and kcp-*")
	f.DurationVar(&ctrlOpts.UnservedKindGrace, "unserved-kind-grace", placement.DefaultUnservedKindGrace, "how long a placement keeps its last resource snapshot (and the members everything it placed) while a kind it selected is not served by its workspace, as after a restart or during a CRD's schema change; after that the kind is taken as gone")
	f.Int64Var(&ctrlOpts.TeamLimits.Objects, "team-limit-objects", ctrlOpts.TeamLimits.Objects, "objects a team may keep on the hub, all its workspaces together, where no ClusterGrant naming it sets spec.limits.objects (see docs/tenancy.md)")
	f.Var((*bytesFlag)(&ctrlOpts.TeamLimits.Bytes), "team-limit-storage", "bytes a team's objects may take in the hub's etcd (a quantity, e.g. 64Mi) where no ClusterGrant naming it sets spec.limits.storage")
	f.Int64Var(&ctrlOpts.TeamLimits.Placements, "team-limit-placements", ctrlOpts.TeamLimits.Placements, "placements a team may have where no ClusterGrant naming it sets spec.limits.placements")
	f.Int64Var(&ctrlOpts.TeamLimits.Overrides, "team-limit-overrides", ctrlOpts.TeamLimits.Overrides, "overrides a team may have where no ClusterGrant naming it sets spec.limits.overrides")
	f.Int64Var(&ctrlOpts.TeamLimits.SnapshotsKept, "team-limit-snapshots-kept", ctrlOpts.TeamLimits.SnapshotsKept, "the highest revisionHistoryLimit a team's placement may set where no ClusterGrant naming the team sets spec.limits.snapshotsKept")
	f.BoolVar(&ctrlOpts.WorkloadReports, "workload-reports", ctrlOpts.WorkloadReports, "write each placement's workload report and mirror statuses back (reportBackStrategy); off, teams see only the placements' own status (see docs/status.md)")
	f.DurationVar(&ctrlOpts.ForceDeleteWait, "force-delete-wait-time", ctrlOpts.ForceDeleteWait, "how long removing a member cluster waits for its syncer to confirm before its hub state is deleted anyway")
	f.BoolVar(&opts.AdmissionWebhooks, "admission-webhooks", opts.AdmissionWebhooks, "call the admission webhooks workspaces configure (off by default: with kcp v0.28.1 it costs about a third of the hub's CPU under load; see docs/hub.md)")
	f.BoolVar(&opts.WatchCache, "watch-cache", opts.WatchCache, "serve lists and watches from the API server's watch caches instead of etcd (several times the memory under load, no faster; see docs/performance.md)")
	f.BoolVar(&opts.EmbeddedEtcdDefrag, "embedded-etcd-defrag", opts.EmbeddedEtcdDefrag, "defragment the embedded etcd's database when at least half of its file and 32 MiB are free, with at most 256 MiB in use; etcd serves nothing while it copies what is in use (see docs/operations.md)")
	f.DurationVar(&opts.EtcdCompactionInterval, "etcd-compaction-interval", opts.EtcdCompactionInterval, "how often the API server compacts etcd's history of changes (etcd keeps one to two intervals of it); shorter keeps a smaller database file but makes more watches start over with a list, 0 never compacts (see docs/operations.md)")
	f.BoolVar(&opts.EtcdCompression, "etcd-compression", opts.EtcdCompression, "store objects compressed (zstd) in etcd, which keeps its database file at about 40% of the size; off, the hub still reads what it compressed before (see docs/operations.md)")
	f.Int64Var(&opts.EmbeddedEtcdQuotaBytes, "embedded-etcd-quota-backend-bytes", opts.EmbeddedEtcdQuotaBytes, "size of the embedded etcd's database at which it refuses writes; 0 keeps etcd's default of 2 GiB (see docs/operations.md)")
	f.BoolVar(&opts.ResourceQuotas, "resource-quotas", opts.ResourceQuotas, "enforce ResourceQuotas in workspaces (kcp runs a quota controller per workspace: about half of what each team workspace costs the hub; see docs/hub.md)")
	f.DurationVar(&pacer.Interval, "gc-pace-interval", pacer.Interval, "let the hub's heap grow only by what it allocates in this time before the next garbage collection (GOGC between 25 and 100, fleet_gc_percent; at most 50 while the hub has CPU to spare), and hand the memory of a busy spell back once the hub is quiet: an idle hub keeps less memory for a collection about this often (see docs/operations.md); 0 keeps Go's default (GOGC=100), as does GOGC set in the environment")
	boardOpts.addFlags(f)
	metricsOpts.AddFlags(f)
	f.IntVarP(&opts.LogVerbosity, "v", "v", opts.LogVerbosity, "log verbosity")
	return cmd
}

// bytesFlag is a flag of bytes written as a quantity (64Mi).
type bytesFlag int64

func (b *bytesFlag) String() string {
	return resource.NewQuantity(int64(*b), resource.BinarySI).String()
}

func (b *bytesFlag) Set(s string) error {
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return fmt.Errorf("%q is not a quantity of bytes such as 64Mi: %w", s, err)
	}
	*b = bytesFlag(q.Value())
	return nil
}

func (b *bytesFlag) Type() string { return "quantity" }
