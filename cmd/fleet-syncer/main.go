// Command fleet-syncer runs next to a member cluster and pulls its Work from
// the Fleetplane hub: it applies the Work, reports status, and heartbeats the
// cluster's properties. It only makes outbound connections.
package main

import (
	"context"
	goflag "flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/fleetplane/fleetplane/internal/binpages"
	"github.com/fleetplane/fleetplane/metrics"
	"github.com/fleetplane/fleetplane/syncer/agent"
	"github.com/fleetplane/fleetplane/syncer/properties"
)

func main() {
	if err := newCommand().Execute(); err != nil {
		os.Exit(1)
	}
}

func newCommand() *cobra.Command {
	var (
		hubKubeconfig, memberKubeconfig, memberName string
		hubQPS, memberQPS                           float32
		hubBurst, memberBurst                       int
		metricsOpts                                 = metrics.ServerOptions{BindAddress: ":8090"}
	)
	cmd := &cobra.Command{
		Use:          "fleet-syncer --hub-kubeconfig FILE --member-name NAME [--member-kubeconfig FILE]",
		Short:        "Pull a member cluster's Work from the Fleetplane hub and apply it",
		SilenceUsage: true,
		Args:         cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if memberName == "" || hubKubeconfig == "" {
				return fmt.Errorf("--member-name and --hub-kubeconfig are required (kubectl fleet join prints both)")
			}
			hub, err := clientcmd.BuildConfigFromFlags("", hubKubeconfig)
			if err != nil {
				return fmt.Errorf("reading --hub-kubeconfig: %w", err)
			}
			member, err := memberConfig(memberKubeconfig)
			if err != nil {
				return err
			}
			hub.QPS, hub.Burst = hubQPS, hubBurst
			member.QPS, member.Burst = memberQPS, memberBurst
			metrics.CountRequests(hub, "hub")
			metrics.CountRequests(member, "member")
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			logger := klog.NewKlogr()
			ctrl.SetLogger(logger)
			ctx = klog.NewContext(ctx, logger)
			if _, err := metrics.Serve(ctx, metricsOpts, logger); err != nil {
				return err
			}
			go binpages.ReleaseEvery(ctx, time.Minute, logger.WithName("binpages"))
			return runUntilDone(ctx, agent.Options{Hub: hub, Member: member, MemberName: memberName, Properties: &properties.Default{}})
		},
	}
	f := cmd.Flags()
	f.StringVar(&hubKubeconfig, "hub-kubeconfig", "", "kubeconfig for the hub's platform workspace (root:fleet), with the member's own credential")
	f.StringVar(&memberKubeconfig, "member-kubeconfig", "", "kubeconfig of the member cluster; empty uses the in-cluster config")
	f.StringVar(&memberName, "member-name", "", "name of the MemberCluster on the hub")
	f.Float32Var(&hubQPS, "hub-api-qps", 50, "QPS towards the hub")
	f.IntVar(&hubBurst, "hub-api-burst", 500, "burst towards the hub")
	f.Float32Var(&memberQPS, "member-api-qps", 250, "QPS towards the member cluster")
	f.IntVar(&memberBurst, "member-api-burst", 1000, "burst towards the member cluster")
	metricsOpts.AddFlags(f)
	// klog's -v: 2 logs each object the syncer creates, takes over,
	// updates, releases or deletes (docs/operations.md).
	klogFlags := goflag.NewFlagSet("klog", goflag.ContinueOnError)
	klog.InitFlags(klogFlags)
	f.AddGoFlag(klogFlags.Lookup("v"))
	return cmd
}

func memberConfig(path string) (*rest.Config, error) {
	if path == "" {
		cfg, err := rest.InClusterConfig()
		if err != nil {
			return nil, fmt.Errorf("no --member-kubeconfig and not running in a cluster: %w", err)
		}
		return cfg, nil
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return nil, fmt.Errorf("reading --member-kubeconfig: %w", err)
	}
	return cfg, nil
}

// runUntilDone restarts the syncer after errors (e.g. the hub or the member
// was unreachable at start) until it is told to stop. Nothing applied is
// touched in between.
func runUntilDone(ctx context.Context, opts agent.Options) error {
	backoff := time.Second
	for {
		started := time.Now()
		err := agent.Run(ctx, opts)
		if ctx.Err() != nil {
			return nil
		}
		if time.Since(started) > time.Minute {
			// It ran fine for a while: this is a new failure.
			backoff = time.Second
		}
		klog.FromContext(ctx).Error(err, "syncer stopped; restarting", "after", backoff)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, time.Minute)
	}
}
