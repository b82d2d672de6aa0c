package clusterprofile

import (
	"context"
	"maps"
	"slices"
	"sort"
	"time"

	"github.com/kcp-dev/logicalcluster/v3"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	inventoryv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
	"github.com/fleetplane/fleetplane/workspaces/tenancy"
)

// ClusterManager names Fleetplane as the manager of the profiles it
// writes (spec.clusterManager.name, and the x-k8s.io/cluster-manager
// label); profiles another manager wrote are left alone.
const ClusterManager = "Fleetplane"

// Namespace holds a workspace's ClusterProfiles.
const Namespace = clusterv1beta1.FleetSystemNamespace

// JoinedCondition mirrors the member cluster's Joined condition.
const JoinedCondition = "Joined"

// maxPropertyValue is the longest property value a profile takes (the
// API's limit); longer ones (a CA bundle) are left out.
const maxPropertyValue = 1024

// bindingWait is how long a workspace that bound the cluster inventory API
// waits before its profiles are written again: kcp serves the kind a
// moment after the binding is Bound.
const bindingWait = 2 * time.Second

// Reconcile makes the workspace's ClusterProfiles those of the clusters it
// may use.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	name := logicalcluster.Name(req.Name)
	if !r.serves(name) {
		// Gone: its clients are forgotten, and must not be made again.
		return ctrl.Result{}, nil
	}
	ws, err := r.Workspaces.For(name)
	if err != nil {
		return ctrl.Result{}, err
	}
	path, err := ws.Path(ctx)
	if apierrors.IsNotFound(err) || apierrors.IsForbidden(err) {
		r.Forget(name)
		return ctrl.Result{}, nil
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	access, err := (&tenancy.Grants{Reader: r.Fleet}).For(ctx, path)
	if err != nil {
		return ctrl.Result{}, err
	}
	// Read only: profileOf copies what it keeps.
	members := &clusterv1beta1.MemberClusterList{}
	if err := r.Fleet.List(ctx, members, client.UnsafeDisableDeepCopy); err != nil {
		return ctrl.Result{}, err
	}
	want := map[string]*inventoryv1alpha1.ClusterProfile{}
	for i := range members.Items {
		if mc := &members.Items[i]; mc.DeletionTimestamp.IsZero() && access.Granted(mc) {
			want[mc.Name] = profileOf(mc)
		}
	}
	if err := client.IgnoreAlreadyExists(ws.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: Namespace}})); err != nil {
		return ctrl.Result{}, err
	}
	existing := &inventoryv1alpha1.ClusterProfileList{}
	if err := ws.Client.List(ctx, existing, client.InNamespace(Namespace)); err != nil {
		if meta.IsNoMatchError(err) {
			ws.Mapper.Reset()
			return ctrl.Result{RequeueAfter: bindingWait}, nil
		}
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, r.sync(ctx, ws.Client, path, existing.Items, want)
}

// sync creates, updates and deletes the workspace's profiles to match want.
func (r *Reconciler) sync(ctx context.Context, c client.Client, path logicalcluster.Path, existing []inventoryv1alpha1.ClusterProfile, want map[string]*inventoryv1alpha1.ClusterProfile) error {
	logger := log.FromContext(ctx).WithValues("workspace", path)
	for i := range existing {
		p := &existing[i]
		if p.Spec.ClusterManager.Name != ClusterManager {
			continue
		}
		w, ok := want[p.Name]
		delete(want, p.Name)
		if !ok {
			logger.V(2).Info("removing the ClusterProfile of a cluster the workspace may no longer use", "cluster", p.Name)
			if err := client.IgnoreNotFound(c.Delete(ctx, p)); err != nil {
				return err
			}
			continue
		}
		if err := update(ctx, c, p, w); err != nil {
			return err
		}
	}
	for _, name := range slices.Sorted(maps.Keys(want)) {
		w := want[name]
		status := w.Status
		logger.V(2).Info("adding the ClusterProfile of a cluster the workspace may use", "cluster", name)
		if err := c.Create(ctx, w); err != nil {
			if apierrors.IsAlreadyExists(err) {
				continue // another manager's, or ours seen next time
			}
			return err
		}
		w.Status = status
		setConditions(&w.Status, nil, w.Generation)
		if err := c.Status().Update(ctx, w); err != nil {
			return err
		}
	}
	return nil
}

// update brings one profile to what it should show; written only when it
// changed.
func update(ctx context.Context, c client.Client, p, want *inventoryv1alpha1.ClusterProfile) error {
	if !equality.Semantic.DeepEqual(p.Labels, want.Labels) || p.Spec.DisplayName != want.Spec.DisplayName {
		p.Labels, p.Spec.DisplayName = want.Labels, want.Spec.DisplayName
		if err := c.Update(ctx, p); err != nil {
			return client.IgnoreNotFound(err)
		}
	}
	status := want.Status
	setConditions(&status, p.Status.Conditions, p.Generation)
	if equality.Semantic.DeepEqual(p.Status, status) {
		return nil
	}
	p.Status = status
	return client.IgnoreNotFound(c.Status().Update(ctx, p))
}

// profileOf is the profile a member cluster should have; its conditions
// are set against the profile's current ones (setConditions).
func profileOf(mc *clusterv1beta1.MemberCluster) *inventoryv1alpha1.ClusterProfile {
	labels := map[string]string{}
	for k, v := range mc.Labels {
		labels[k] = v
	}
	labels[inventoryv1alpha1.LabelClusterManagerKey] = ClusterManager
	p := &inventoryv1alpha1.ClusterProfile{
		ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: mc.Name, Labels: labels},
		Spec:       inventoryv1alpha1.ClusterProfileSpec{DisplayName: mc.Name, ClusterManager: inventoryv1alpha1.ClusterManager{Name: ClusterManager}},
	}
	p.Status.Version.Kubernetes = mc.Status.Properties[clusterv1beta1.K8sVersionProperty].Value
	for name, v := range mc.Status.Properties {
		if v.Value != "" && len(v.Value) <= maxPropertyValue {
			p.Status.Properties = append(p.Status.Properties, inventoryv1alpha1.Property{Name: string(name), Value: v.Value})
		}
	}
	sort.Slice(p.Status.Properties, func(i, j int) bool { return p.Status.Properties[i].Name < p.Status.Properties[j].Name })
	p.Status.Conditions = []metav1.Condition{health(mc), joined(mc)}
	return p
}

// health is ControlPlaneHealthy from the member's Healthy condition, whose
// reasons are the inventory API's: the member's syncer reports its API
// server healthy, unhealthy, or nothing, or its heartbeat was lost.
func health(mc *clusterv1beta1.MemberCluster) metav1.Condition {
	c := metav1.Condition{Type: inventoryv1alpha1.ClusterConditionControlPlaneHealthy, Status: metav1.ConditionUnknown,
		Reason: clusterv1beta1.ReasonMemberAgentReportedNoStatus, Message: "the member cluster's syncer has not reported yet"}
	if h := meta.FindStatusCondition(mc.Status.Conditions, clusterv1beta1.ConditionTypeMemberClusterHealthy); h != nil {
		c.Status, c.Reason, c.Message = h.Status, h.Reason, h.Message
	}
	return c
}

func joined(mc *clusterv1beta1.MemberCluster) metav1.Condition {
	c := metav1.Condition{Type: JoinedCondition, Status: metav1.ConditionUnknown, Reason: clusterv1beta1.ReasonMemberClusterJoinStateUnknown,
		Message: "the member cluster has not joined yet"}
	if j := meta.FindStatusCondition(mc.Status.Conditions, clusterv1beta1.ConditionTypeMemberClusterJoined); j != nil {
		c.Status, c.Reason, c.Message = j.Status, j.Reason, j.Message
	}
	return c
}

// setConditions sets st's conditions over the profile's current ones, so
// that a condition that did not change keeps its transition time.
func setConditions(st *inventoryv1alpha1.ClusterProfileStatus, current []metav1.Condition, generation int64) {
	conds := append([]metav1.Condition(nil), current...)
	for _, c := range st.Conditions {
		c.ObservedGeneration = generation
		meta.SetStatusCondition(&conds, c)
	}
	st.Conditions = conds
}
