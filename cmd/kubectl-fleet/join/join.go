// Package join implements `kubectl fleet join` and `kubectl fleet unjoin`:
// registering a member cluster with the hub, minting its syncer's scoped hub
// credential, and running the syncer (locally or in the member cluster).
package join

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
	tenancyv1alpha1 "github.com/fleetplane/fleetplane/apis/tenancy/v1alpha1"
	"github.com/fleetplane/fleetplane/internal/huburl"
)

// options is shared by join and unjoin.
type options struct {
	flags   *genericclioptions.ConfigFlags
	streams genericiooptions.IOStreams
}

func (o *options) progress(format string, args ...any) {
	fmt.Fprintf(o.streams.ErrOut, format+"\n", args...)
}

// hubClient returns a client for root:fleet with the current credentials.
func (o *options) hubClient() (client.Client, *rest.Config, error) {
	cfg, err := o.flags.ToRESTConfig()
	if err != nil {
		return nil, nil, err
	}
	cfg = rest.CopyConfig(cfg)
	cfg.Host = huburl.For(cfg.Host, tenancyv1alpha1.FleetWorkspace)
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, clusterv1beta1.AddToScheme} {
		if err := add(s); err != nil {
			return nil, nil, err
		}
	}
	c, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		return nil, nil, fmt.Errorf("connecting to the hub at %s: %w", cfg.Host, err)
	}
	return c, cfg, nil
}

func syncerIdentity(member string) (namespace, name string) {
	return clusterv1beta1.FleetSystemNamespace, "fleet-syncer-" + member
}

// NewUnjoinCommand returns `kubectl fleet unjoin NAME`.
func NewUnjoinCommand(flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &options{flags: flags, streams: streams}
	var stateDir string
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "unjoin NAME",
		Short: "Remove a member cluster from the fleet (what it runs stays on the cluster)",
		Long: `Deletes the MemberCluster: the hub asks the member's syncer to leave, waits
until it confirms (or the hub's force-delete wait time passes), then removes
the member's namespace, Work and RBAC on the hub. Objects already placed on the
member cluster are kept. A syncer started with 'join --run' is stopped and its
hub credential revoked.`,
		Example: `  kubectl fleet unjoin member-1
  kubectl fleet unjoin member-1 --timeout 5m --state-dir ~/.fleetplane/syncers`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.unjoin(cmd.Context(), args[0], stateDir, timeout)
		},
	}
	cmd.Flags().StringVar(&stateDir, "state-dir", defaultStateDir(), "where 'join --run' keeps local syncers' kubeconfigs, logs and pids")
	cmd.Flags().DurationVar(&timeout, "timeout", 20*time.Minute, "how long to wait for the member to leave")
	return cmd
}

func (o *options) unjoin(ctx context.Context, name, stateDir string, timeout time.Duration) error {
	c, _, err := o.hubClient()
	if err != nil {
		return err
	}
	mc := &clusterv1beta1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := c.Delete(ctx, mc); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting MemberCluster %s: %w", name, err)
	}
	o.progress("MemberCluster %s is leaving; waiting for its syncer to confirm...", name)
	left := wait.PollUntilContextTimeout(ctx, time.Second, timeout, true, func(ctx context.Context) (bool, error) {
		err := c.Get(ctx, client.ObjectKey{Name: name}, mc)
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
	// The syncer loses its hub credential whether or not leaving finished:
	// deleting its service account revokes every token issued to it.
	if err := o.revoke(ctx, c, name, stateDir); err != nil {
		return err
	}
	if left != nil {
		return fmt.Errorf("MemberCluster %s is still leaving: %w (its syncer's hub credential is revoked; see `kubectl get membercluster %s -o yaml` in root:fleet)", name, left, name)
	}
	fmt.Fprintf(o.streams.Out, "Member cluster %s has left the fleet.\n", name)
	return nil
}

// revoke stops a local syncer and deletes the syncer's hub identity.
func (o *options) revoke(ctx context.Context, c client.Client, name, stateDir string) error {
	if err := stopLocalSyncer(stateDir, name); err != nil {
		return err
	}
	ns, sa := syncerIdentity(name)
	err := c.Delete(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: sa}})
	if client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("revoking the syncer's hub credential: %w", err)
	}
	o.progress("Revoked the hub credential of %s's syncer.", name)
	return nil
}

// waitJoined waits for the MemberCluster's Joined condition, showing progress.
func (o *options) waitJoined(ctx context.Context, c client.Client, name string, timeout time.Duration, out io.Writer) error {
	var last string
	err := wait.PollUntilContextTimeout(ctx, time.Second, timeout, true, func(ctx context.Context) (bool, error) {
		mc := &clusterv1beta1.MemberCluster{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, mc); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		joined := meta.FindStatusCondition(mc.Status.Conditions, clusterv1beta1.ConditionTypeMemberClusterJoined)
		if joined == nil {
			return false, nil
		}
		if state := string(joined.Status) + ": " + joined.Message; state != last {
			o.progress("  Joined=%s", state)
			last = state
		}
		return joined.Status == metav1.ConditionTrue, nil
	})
	if err != nil {
		return fmt.Errorf("member cluster %s has not joined (last state %q): %w", name, last, err)
	}
	fmt.Fprintf(out, "Member cluster %s has joined the fleet.\n", name)
	return nil
}
