// Package teamadmission is Fleetplane's admission plugin in the hub's kcp:
// what a team may not do inside its own workspace, where it is admin and
// RBAC cannot stop it: create child workspaces, unless a ClusterGrant lets
// it, and go over its limits.
package teamadmission

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync/atomic"

	kcpbootstrap "github.com/kcp-dev/kcp/pkg/authorization/bootstrap"
	"github.com/kcp-dev/logicalcluster/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/admission"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	tenancyv1alpha1 "github.com/fleetplane/fleetplane/apis/tenancy/v1alpha1"
	"github.com/fleetplane/fleetplane/workspaces/tenancy"
	"github.com/fleetplane/fleetplane/workspaces/usage"
)

// PluginName is the plugin's name in the hub's admission chain.
const PluginName = "fleetplane.io/TeamWorkspaces"

var (
	workspaces      = schema.GroupResource{Group: "tenancy.kcp.io", Resource: "workspaces"}
	logicalClusters = schema.GroupResource{Group: "core.kcp.io", Resource: "logicalclusters"}
)

// Rules decide what the plugin refuses. They need the hub's view of
// workspaces and grants, which exists only once the hub serves: until
// SetRules, team-level requests are refused with a request to retry.
type Rules interface {
	// MayCreateChildWorkspace returns why no workspace may be created in
	// the logical cluster, or nil.
	MayCreateChildWorkspace(ctx context.Context, cluster logicalcluster.Name) error
	// TeamOf returns the team of the logical cluster with its limits and
	// usage, or nil where no limits hold (outside the team workspaces, or
	// until the hub has counted what they store).
	TeamOf(ctx context.Context, cluster logicalcluster.Name) (*tenancy.Team, error)
}

// Plugin is the admission plugin.
type Plugin struct {
	*admission.Handler
	rules atomic.Pointer[Rules]
}

var _ admission.ValidationInterface = &Plugin{}

// New returns a plugin without rules yet.
func New() *Plugin {
	return &Plugin{Handler: admission.NewHandler(admission.Create, admission.Update)}
}

// SetRules gives the plugin its rules once the hub can answer them.
func (p *Plugin) SetRules(r Rules) { p.rules.Store(&r) }

// Factory registers the plugin in an admission plugin registry.
func (p *Plugin) Factory(io.Reader) (admission.Interface, error) { return p, nil }

// Validate refuses a workspace created where the rules do not allow one,
// and a write that takes a team over its limits. The hub's own writes
// (hubGroups) are not held to them; what they store in a team's workspaces
// counts.
func (p *Plugin) Validate(ctx context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	if privileged(a) {
		return nil
	}
	cluster, err := genericapirequest.ClusterNameFrom(ctx)
	if err != nil {
		return admission.NewForbidden(a, err)
	}
	if cluster == logicalcluster.Name("root") {
		return nil
	}
	if err := hubsAnnotation(a); err != nil {
		return err
	}
	rules := p.rules.Load()
	if a.GetResource().GroupResource() == workspaces && a.GetSubresource() == "" && a.GetOperation() == admission.Create {
		if rules == nil {
			return admission.NewForbidden(a, errors.New("the hub is still starting and cannot tell yet whether this workspace may have child workspaces; try again in a moment"))
		}
		if err := (*rules).MayCreateChildWorkspace(ctx, cluster); err != nil {
			return admission.NewForbidden(a, err)
		}
	}
	if rules == nil {
		return nil // the limits hold from when the hub has read the grants and counted
	}
	team, err := (*rules).TeamOf(ctx, cluster)
	if err != nil {
		return admission.NewForbidden(a, fmt.Errorf("checking the team's limits: %w; try again in a moment", err))
	}
	if team == nil {
		return nil
	}
	return withinLimits(a, team)
}

// hubsAnnotation refuses a change to the usage the hub publishes on a
// workspace's LogicalCluster.
func hubsAnnotation(a admission.Attributes) error {
	if a.GetResource().GroupResource() != logicalClusters || a.GetOperation() != admission.Update {
		return nil
	}
	annotation := func(obj runtime.Object) (string, bool) {
		m, ok := obj.(metav1.Object)
		if !ok {
			return "", false
		}
		v, ok := m.GetAnnotations()[tenancyv1alpha1.UsageAnnotation]
		return v, ok
	}
	now, has := annotation(a.GetObject())
	before, had := annotation(a.GetOldObject())
	if now != before || has != had {
		return admission.NewForbidden(a, fmt.Errorf("annotation %s shows the team's use of the hub and is written by the hub alone; leave it as it is", tenancyv1alpha1.UsageAnnotation))
	}
	return nil
}

// withinLimits refuses a write that takes the team over a limit: a new
// object, an object grown, a placement keeping too many snapshots.
func withinLimits(a admission.Attributes, team *tenancy.Team) error {
	gr := a.GetResource().GroupResource()
	if placements.Has(gr.Resource) && gr.Group == usage.PlacementGroup && a.GetSubresource() == "" {
		if limit, found, _ := unstructured.NestedInt64(content(a.GetObject()), "spec", "revisionHistoryLimit"); found {
			if err := team.SnapshotsKept(a.GetKind().Kind, a.GetName(), limit); err != nil {
				return admission.NewForbidden(a, err)
			}
		}
	}
	counted := usage.Counted(gr)
	if counted.Objects == 0 {
		return nil
	}
	var add usage.Usage
	if a.GetOperation() == admission.Create && a.GetSubresource() == "" {
		add = counted
	}
	add.Bytes = size(a.GetObject())
	if a.GetOperation() == admission.Update {
		add.Bytes -= size(a.GetOldObject())
	}
	if err := team.Exceeded(add); err != nil {
		return admission.NewForbidden(a, err)
	}
	return nil
}

var placements = sets.New("clusterresourceplacements", "resourceplacements")

// size is how many bytes the object takes as JSON: what etcd holds of it,
// or more where the hub compresses.
func size(obj runtime.Object) int64 {
	if obj == nil {
		return 0
	}
	raw, err := json.Marshal(obj)
	if err != nil {
		return 0
	}
	return int64(len(raw))
}

func content(obj runtime.Object) map[string]interface{} {
	if u, ok := obj.(runtime.Unstructured); ok {
		return u.UnstructuredContent()
	}
	if obj == nil {
		return nil
	}
	m, _ := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	return m
}

// hubGroups are the groups of the hub's own identities: system:masters
// (the hub's controllers, kcp's own, the bootstrap) and kcp's logical
// cluster admins, with which the root shard sets up a new workspace on
// another shard. Only the hub's own certificates carry them.
var hubGroups = sets.New("system:masters", kcpbootstrap.SystemLogicalClusterAdmin, kcpbootstrap.SystemExternalLogicalClusterAdmin)

func privileged(a admission.Attributes) bool {
	u := a.GetUserInfo()
	return u != nil && hubGroups.HasAny(u.GetGroups()...)
}
