package drain

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/kcp-dev/logicalcluster/v3"
	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	tenancyv1alpha1 "github.com/fleetplane/fleetplane/apis/tenancy/v1alpha1"
	"github.com/fleetplane/fleetplane/cmd/kubectl-fleet/hub"
	"github.com/fleetplane/fleetplane/internal/workhomes"
)

type drainOptions struct {
	flags         *genericclioptions.ConfigFlags
	out           io.Writer
	timeout       time.Duration
	retryInterval time.Duration
}

// NewDrainCommand returns `kubectl fleet drain NAME`, also
// `draincluster --cluster-name NAME` as KubeFleet spells it.
func NewDrainCommand(flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := drainOptions{flags: flags, out: streams.ErrOut}
	var name *hub.NameFlag
	cmd := &cobra.Command{
		Use:     "drain MEMBER [--timeout 10m]",
		Aliases: []string{"draincluster"},
		Short:   "Cordon a member cluster and evict the placements it holds",
		Long: `Cordons the member cluster, then evicts every ClusterResourcePlacement
(of any workspace) with resources on it, one ClusterResourcePlacementEviction
each in the placement's workspace. An eviction a placement's disruption budget
blocks is tried again every --retry-interval until --timeout; PickN
placements move to other clusters, PickAll placements shrink. PickFixed
placements cannot be evicted (edit their clusterNames), and
ResourcePlacements have no eviction API: drain lists them and fails. Run it
with hub admin credentials; uncordon the cluster to use it again.`,
		Example: `  kubectl fleet drain member-1
  kubectl fleet drain member-1 --timeout 30m --retry-interval 30s

  # KubeFleet's form
  kubectl fleet draincluster --hub-cluster-context hub --cluster-name member-1`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			member, err := name.Name(args)
			if err != nil {
				return err
			}
			return o.drain(cmd.Context(), member)
		},
	}
	name = hub.AddNameFlag(cmd, "cluster-name", "the member cluster")
	cmd.Flags().DurationVar(&o.timeout, "timeout", 10*time.Minute, "how long to keep trying evictions that disruption budgets block")
	cmd.Flags().DurationVar(&o.retryInterval, "retry-interval", 5*time.Second, "how often a blocked eviction is tried again")
	return cmd
}

// placed is a placement with resources on the member.
type placed struct {
	workspace logicalcluster.Path
	namespace string
	name      string
}

func (p placed) String() string {
	if p.namespace != "" {
		return fmt.Sprintf("ResourcePlacement %s/%s in %s", p.namespace, p.name, p.workspace)
	}
	return fmt.Sprintf("ClusterResourcePlacement %s in %s", p.name, p.workspace)
}

func (o *drainOptions) progress(format string, args ...any) {
	fmt.Fprintf(o.out, format+"\n", args...)
}

func (o *drainOptions) drain(ctx context.Context, member string) error {
	changed, err := setCordon(ctx, o.flags, member, true)
	if err != nil {
		return err
	}
	o.progress("member cluster %s %s", member, pick(changed, "cordoned", "already cordoned"))
	fleet, err := hub.At(o.flags, tenancyv1alpha1.FleetWorkspace)
	if err != nil {
		return err
	}
	all, err := o.placementsOn(ctx, fleet, member)
	if err != nil {
		return err
	}
	var crps, rps []placed
	for _, p := range all {
		if p.namespace == "" {
			crps = append(crps, p)
		} else {
			rps = append(rps, p)
		}
	}
	o.progress("%d ClusterResourcePlacement(s) to evict from %s", len(crps), member)
	deadline := time.Now().Add(o.timeout)
	var failed []string
	for i, p := range crps {
		o.progress("[%d/%d] evicting %s", i+1, len(crps), p)
		if err := o.evict(ctx, p, member, deadline); err != nil {
			o.progress("[%d/%d] %v", i+1, len(crps), err)
			failed = append(failed, err.Error())
			continue
		}
		o.progress("[%d/%d] evicted %s", i+1, len(crps), p)
	}
	for _, p := range rps {
		failed = append(failed, fmt.Sprintf("%s keeps its resources on %s: ResourcePlacements cannot be evicted; narrow its policy or delete it", p, member))
	}
	if len(failed) > 0 {
		return fmt.Errorf("member cluster %s is cordoned but not drained:\n  %s", member, strings.Join(failed, "\n  "))
	}
	o.progress("member cluster %s drained", member)
	return nil
}

// placementsOn lists the placements with Work for the member, from the
// Work in its namespace of root:fleet and of each shard's home of Work,
// which names each Work's workspace.
func (o *drainOptions) placementsOn(ctx context.Context, fleet *hub.Workspace, member string) ([]placed, error) {
	ns := fmt.Sprintf(clusterv1beta1.NamespaceNameFormat, member)
	works, err := o.worksOf(ctx, fleet, ns)
	if err != nil {
		return nil, err
	}
	seen := map[placed]bool{}
	var out []placed
	for _, w := range works {
		name := w.Labels[placementv1beta1.PlacementTrackingLabel]
		path := w.Annotations[placementv1beta1.WorkspacePathAnnotation]
		if path == "" {
			path = w.Labels[placementv1beta1.WorkspaceLabel]
		}
		p := placed{workspace: logicalcluster.NewPath(path), namespace: w.Labels[placementv1beta1.ParentNamespaceLabel], name: name}
		if name == "" || path == "" || seen[p] || !w.DeletionTimestamp.IsZero() {
			continue
		}
		seen[p] = true
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out, nil
}

// worksOf lists the Work in namespace ns of root:fleet and of every home of
// Work the member's syncer is told of there (on a hub of several shards).
func (o *drainOptions) worksOf(ctx context.Context, fleet *hub.Workspace, ns string) ([]placementv1beta1.Work, error) {
	works := &placementv1beta1.WorkList{}
	if err := fleet.List(ctx, works, client.InNamespace(ns)); err != nil {
		return nil, fmt.Errorf("listing the Work in %s of %s: %w", ns, tenancyv1alpha1.FleetWorkspace, err)
	}
	out := works.Items
	homes := &corev1.SecretList{}
	if err := fleet.List(ctx, homes, client.InNamespace(ns), client.HasLabels{workhomes.Label}); err != nil {
		return nil, fmt.Errorf("listing the shards' homes of Work in %s of %s: %w", ns, tenancyv1alpha1.FleetWorkspace, err)
	}
	for i := range homes.Items {
		home, err := workhomes.FromSecret(&homes.Items[i])
		if err != nil {
			return nil, err
		}
		ws, err := hub.At(o.flags, logicalcluster.NewPath(home.Cluster))
		if err != nil {
			return nil, err
		}
		if err := ws.List(ctx, works, client.InNamespace(ns)); err != nil {
			return nil, fmt.Errorf("listing the Work in %s of shard %s's home of Work: %w", ns, home.Shard, err)
		}
		out = append(out, works.Items...)
	}
	return out, nil
}

// evict creates evictions for the placement until one is executed, one is
// invalid, or the deadline passes.
func (o *drainOptions) evict(ctx context.Context, p placed, member string, deadline time.Time) error {
	ws, err := hub.At(o.flags, p.workspace)
	if err != nil {
		return err
	}
	for {
		e := &placementv1beta1.ClusterResourcePlacementEviction{
			ObjectMeta: metav1.ObjectMeta{GenerateName: evictionPrefix(member, p.name)},
			Spec:       placementv1beta1.PlacementEvictionSpec{PlacementName: p.name, ClusterName: member},
		}
		if err := ws.Create(ctx, e); err != nil {
			return fmt.Errorf("creating an eviction of %s: %w", p, err)
		}
		valid, executed, err := waitDecided(ctx, ws, e, deadline)
		if err != nil {
			return fmt.Errorf("evicting %s: %w", p, err)
		}
		switch {
		case valid.Status == metav1.ConditionFalse:
			return fmt.Errorf("cannot evict %s: %s (eviction %s)", p, valid.Message, e.Name)
		case executed.Status == metav1.ConditionTrue:
			return nil
		case time.Now().Add(o.retryInterval).After(deadline):
			return fmt.Errorf("gave up evicting %s after --timeout: %s", p, executed.Message)
		}
		o.progress("      blocked: %s; trying again in %s", executed.Message, o.retryInterval)
		// The blocked eviction is terminal; the next try is a new one.
		if err := client.IgnoreNotFound(ws.Delete(ctx, e)); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(o.retryInterval):
		}
	}
}

// evictionPrefix names a drain's evictions after the member and placement.
func evictionPrefix(member, placement string) string {
	prefix := fmt.Sprintf("drain-%s-%s-", member, placement)
	if len(prefix) > 200 {
		prefix = prefix[:200]
	}
	return prefix
}

// waitDecided waits for the eviction controller's verdict, until the
// deadline.
func waitDecided(ctx context.Context, ws *hub.Workspace, e *placementv1beta1.ClusterResourcePlacementEviction, deadline time.Time) (valid, executed metav1.Condition, err error) {
	for {
		if err := ws.Get(ctx, client.ObjectKeyFromObject(e), e); err != nil {
			if apierrors.IsNotFound(err) {
				return valid, executed, fmt.Errorf("eviction %s was deleted before it was decided", e.Name)
			}
			return valid, executed, err
		}
		v := meta.FindStatusCondition(e.Status.Conditions, placementv1beta1.PlacementEvictionConditionTypeValid)
		x := meta.FindStatusCondition(e.Status.Conditions, placementv1beta1.PlacementEvictionConditionTypeExecuted)
		if v != nil && (v.Status == metav1.ConditionFalse || x != nil) {
			if x == nil {
				x = &metav1.Condition{}
			}
			return *v, *x, nil
		}
		if time.Now().After(deadline) {
			return valid, executed, fmt.Errorf("eviction %s was not decided before --timeout; is the hub's eviction controller running?", e.Name)
		}
		select {
		case <-ctx.Done():
			return valid, executed, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}
