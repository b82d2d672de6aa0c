// Command fleet-dev runs a complete Fleetplane on this machine for
// development and demos: the hub (bin/fleet-hub) and local member clusters
// (real kube-apiserver, controller manager, scheduler and kwok nodes), each
// joined with `kubectl fleet join --run`. `make run` starts it.
package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	ctrl "sigs.k8s.io/controller-runtime"

	tenancyv1alpha1 "github.com/fleetplane/fleetplane/apis/tenancy/v1alpha1"
	"github.com/fleetplane/fleetplane/board"
	"github.com/fleetplane/fleetplane/internal/localcluster"
	"github.com/fleetplane/fleetplane/internal/localfleet"
)

func main() {
	switch os.Getenv(roleEnv) {
	case "":
		if code, ok := supervise(); ok {
			os.Exit(code)
		}
	case roleInit:
		os.Exit(runInit())
	}
	// envtest logs through controller-runtime; the clusters' own logs are
	// in their directories.
	ctrl.SetLogger(logr.Discard())
	if err := newCommand().Execute(); err != nil {
		os.Exit(1)
	}
}

// localMembers are the demo fleet: regions and environments like the
// documentation's examples, and different sizes so that property-based
// scheduling has something to choose from.
var localMembers = []localfleet.MemberSpec{
	{Name: "member-1", Labels: map[string]string{"region": "eastus", "env": "prod"}, Nodes: nodes("m1", 2, "4", "16Gi")},
	{Name: "member-2", Labels: map[string]string{"region": "westus", "env": "prod"}, Nodes: nodes("m2", 3, "8", "32Gi")},
	{Name: "member-3", Labels: map[string]string{"region": "eastus", "env": "canary"}, Nodes: nodes("m3", 1, "2", "8Gi")},
	{Name: "member-4", Labels: map[string]string{"region": "westeurope", "env": "staging"}, Nodes: nodes("m4", 2, "2", "8Gi")},
}

func nodes(prefix string, n int, cpu, memory string) []localcluster.NodeSpec {
	var out []localcluster.NodeSpec
	for i := 0; i < n; i++ {
		out = append(out, localcluster.NodeSpec{Name: fmt.Sprintf("%s-node-%d", prefix, i), CPU: cpu, Memory: memory})
	}
	return out
}

func newCommand() *cobra.Command {
	var (
		rootDir   string
		port      int
		members   int
		heartbeat int
		shards    int
		board     string
		verbosity int
	)
	cmd := &cobra.Command{
		Use:          "fleet-dev",
		Short:        "Run a hub and local member clusters until interrupted",
		SilenceUsage: true,
		Args:         cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if members < 0 || members > len(localMembers) {
				return fmt.Errorf("--members must be between 0 and %d", len(localMembers))
			}
			if shards < 1 {
				return fmt.Errorf("--shards must be 1 or more, got %d", shards)
			}
			if heartbeat < 1 || heartbeat > 600 {
				return fmt.Errorf("--heartbeat-period-seconds must be between 1 and 600 (a MemberCluster's limits), got %d", heartbeat)
			}
			specs := slices.Clone(localMembers[:members])
			for i := range specs {
				specs[i].HeartbeatSeconds, specs[i].LogVerbosity = heartbeat, verbosity
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			return run(ctx, rootDir, []string{"--v", strconv.Itoa(verbosity)}, port, shards, board, specs)
		},
	}
	cmd.Flags().StringVar(&rootDir, "root-dir", ".fleet", "state of the hub, the member clusters and their syncers")
	cmd.Flags().IntVar(&port, "secure-port", 6443, "the hub's HTTPS port")
	cmd.Flags().IntVar(&members, "members", 3, "how many local member clusters to start")
	cmd.Flags().StringVar(&board, "board-address", "127.0.0.1:8090", "loopback address of the fleet board, served as the platform admin (port 0 picks a free one)")
	cmd.Flags().IntVar(&shards, "shards", 1, "how many kcp shards the hub runs on; 2 or more adds a front-proxy on --secure-port, and the shards serve on the ports after it")
	// Quick status for trying things out; joined clusters default to 60.
	cmd.Flags().IntVarP(&verbosity, "v", "v", 0, "log verbosity of the hub and the syncers; 2 logs every decision about a placement (docs/operations.md)")
	cmd.Flags().IntVar(&heartbeat, "heartbeat-period-seconds", 5, "how often the members' syncers report (1-600; a joined member's default is 60)")
	return cmd
}

func run(ctx context.Context, rootDir string, hubArgs []string, port, shards int, boardAddress string, specs []localfleet.MemberSpec) error {
	rootDir, err := filepath.Abs(rootDir)
	if err != nil {
		return err
	}
	hub, stop, err := startHub(ctx, rootDir, hubArgs, port, shards)
	if err != nil {
		return err
	}
	defer func() {
		say("Stopping the hub...")
		_ = stop()
	}()

	say("Starting %d local member clusters and their syncers...", len(specs))
	members, err := hub.StartMembers(ctx, filepath.Join(rootDir, "members"), specs)
	defer func() {
		for _, m := range members {
			say("Stopping %s...", m.Name)
			_ = m.Stop()
		}
	}()
	if err != nil {
		return err
	}
	boardLink, err := startBoard(ctx, hub, boardAddress)
	if err != nil {
		return err
	}
	printFleet(hub)
	printNextSteps(hub, members, boardLink)
	<-ctx.Done()
	return nil
}

// startBoard serves the fleet board as the platform admin in root:fleet
// and returns the link that signs the admin in.
func startBoard(ctx context.Context, hub *localfleet.Hub, address string) (string, error) {
	ln, err := board.ListenLoopback(address)
	if err != nil {
		return "", err
	}
	srv := board.New(hub.Admin)
	link, _, err := srv.Link(ctx, tenancyv1alpha1.FleetWorkspace, hub.Admin)
	if err != nil {
		ln.Close()
		return "", fmt.Errorf("starting the fleet board: %w", err)
	}
	go func() {
		if err := srv.Serve(ctx, ln); err != nil {
			say("The fleet board stopped: %v", err)
		}
	}()
	return "http://" + ln.Addr().String() + link, nil
}

// startHub starts the hub: one fleet-hub process, or a root shard, further
// shards and a front-proxy, each in its own directory of rootDir.
func startHub(ctx context.Context, rootDir string, args []string, port, shards int) (*localfleet.Hub, func() error, error) {
	if shards == 1 {
		say("Starting the hub (log: %s)...", filepath.Join(rootDir, "hub.log"))
		hub, err := localfleet.StartHub(ctx, localfleet.HubOptions{RootDir: rootDir, Port: port, Args: args})
		if err != nil {
			return nil, nil, err
		}
		return hub, hub.Stop, nil
	}
	say("Starting the hub on %d shards behind a front-proxy (logs: %s/{root,shard-*}/hub.log, %s/front-proxy/front-proxy.log)...", shards, rootDir, rootDir)
	sharded, err := localfleet.StartShardedHub(ctx, localfleet.ShardedHubOptions{Dir: rootDir, Shards: shards, Port: port, Args: args})
	if err != nil {
		return nil, nil, err
	}
	return sharded.Hub(), sharded.Stop, nil
}

func say(format string, args ...any) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
}

// printFleet shows the members as an admin sees them.
func printFleet(hub *localfleet.Hub) {
	cmd := exec.Command("kubectl", "--kubeconfig", hub.KubeconfigPath(), "--server", hub.Config(tenancyv1alpha1.FleetWorkspace.String()).Host, "get", "memberclusters")
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		say("(kubectl get memberclusters failed: %v)", err)
	}
}

// samplesDir is the source tree's config/samples next to the binaries'
// bin directory, absolute, or the relative path when there is none.
func samplesDir(bin string) string {
	dir := filepath.Join(filepath.Dir(bin), "config", "samples")
	if _, err := os.Stat(dir); err != nil {
		return filepath.Join("config", "samples")
	}
	return dir
}

func printNextSteps(hub *localfleet.Hub, members []*localfleet.Member, boardLink string) {
	bin, _ := filepath.Abs(localfleet.BinDir())
	samples := samplesDir(bin)
	fmt.Printf(`
Fleetplane is running: a hub and %d member clusters. In another shell:

  export KUBECONFIG=%s
  export PATH=%s:$PATH
  kubectl ws :root:fleet && kubectl get memberclusters     # the fleet
  kubectl ws :root:teams && kubectl ws create team-a --enter
  kubectl apply -f %[4]s/team-a/00-namespace.yaml -f %[4]s/team-a/10-deployment.yaml -f %[4]s/team-a/20-crp-namespace.yaml
  kubectl wait crp/web-namespace --for=condition=ClusterResourcePlacementAvailable
  kubectl apply -f %[4]s/team-a/30-rp-web.yaml    # the app, onto two production clusters
  kubectl get crp,rp -A

Member clusters' kubeconfigs:
`, len(members), hub.KubeconfigPath(), bin, samples)
	for _, m := range members {
		fmt.Printf("  %-10s %s\n", m.Name, m.Cluster.KubeconfigPath)
	}
	fmt.Println("\nPrometheus metrics (docs/operations.md; pprof next to them, under /debug/pprof/):")
	fmt.Printf("  %-10s %s\n", "hub", hub.MetricsURL())
	for _, m := range members {
		fmt.Printf("  %-10s %s\n", m.Name, m.MetricsURL())
	}
	fmt.Printf("\nThe fleet board (docs/board.md), signed in as the platform admin by this link, once; teams sign in\nwith a token there, or run kubectl fleet board in their workspace:\n  %s\n", boardLink)
	fmt.Println("\nPress Ctrl-C to stop everything; the hub's state is kept in its root dir.")
}
