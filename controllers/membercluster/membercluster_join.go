package membercluster

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
)

func namespaceFor(member string) string {
	return fmt.Sprintf(clusterv1beta1.NamespaceNameFormat, member)
}

// join makes sure the member's hub side exists: its reserved namespace, the
// RBAC that lets its syncer (spec.identity) read its Work and report status in
// that namespace only, and the InternalMemberCluster asking it to join.
func (r *Reconciler) join(ctx context.Context, mc *clusterv1beta1.MemberCluster) (*clusterv1beta1.InternalMemberCluster, error) {
	ns, err := r.ensureNamespace(ctx, mc)
	if err != nil {
		return nil, err
	}
	if err := grant(ctx, r.Client, mc, ns, syncerRules, true); err != nil {
		return nil, err
	}
	if id := mc.Spec.Identity; id.Kind == rbacv1.ServiceAccountKind && id.Namespace != "" {
		// Without the identity's namespace (yet) there is no token to renew.
		if err := grant(ctx, r.Client, mc, id.Namespace, tokenRenewalRules(id.Name), true); client.IgnoreNotFound(err) != nil {
			return nil, err
		}
	}
	return r.ensureIMC(ctx, mc, ns, clusterv1beta1.ClusterStateJoin)
}

func (r *Reconciler) ensureNamespace(ctx context.Context, mc *clusterv1beta1.MemberCluster) (string, error) {
	name := namespaceFor(mc.Name)
	ns := &corev1.Namespace{}
	err := r.Client.Get(ctx, client.ObjectKey{Name: name}, ns)
	if err == nil {
		return name, nil
	}
	if !apierrors.IsNotFound(err) {
		return "", err
	}
	ns = &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name:   name,
		Labels: map[string]string{clusterv1beta1.FleetResourceLabelKey: "true"},
	}}
	if err := controllerutil.SetControllerReference(mc, ns, r.Client.Scheme()); err != nil {
		return "", err
	}
	if err := r.Client.Create(ctx, ns); ignoreAlreadyExists(err) != nil {
		return "", fmt.Errorf("creating namespace %s for member cluster %s: %w", name, mc.Name, err)
	}
	r.Recorder.Eventf(mc, corev1.EventTypeNormal, clusterv1beta1.EventReasonNamespaceCreated, "Created namespace %s for the member's Work", name)
	return name, nil
}

// syncerRules is everything a member's syncer may do on the hub, and only in
// its own namespace: read its Work and report on it (kcp's maximal permission
// policy and an admission policy keep it to finalizers and status) and
// heartbeat. (Its lease, which keeps a second syncer for the member waiting,
// is on the member cluster.)
var syncerRules = append(slices.Clone(workRules),
	rbacv1.PolicyRule{APIGroups: []string{clusterv1beta1.GroupVersion.Group}, Resources: []string{"internalmemberclusters"}, Verbs: []string{"get", "list", "watch"}},
	rbacv1.PolicyRule{APIGroups: []string{clusterv1beta1.GroupVersion.Group}, Resources: []string{"internalmemberclusters/status"}, Verbs: []string{"get", "update", "patch"}},
	// The shards' homes of Work are named by Secrets (internal/workhomes).
	rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "list", "watch"}},
)

// workRules let a syncer read its Work, report on it and record events
// about it.
var workRules = []rbacv1.PolicyRule{
	{APIGroups: []string{placementv1beta1.GroupVersion.Group}, Resources: []string{"works"}, Verbs: []string{"get", "list", "watch", "update", "patch"}},
	{APIGroups: []string{placementv1beta1.GroupVersion.Group}, Resources: []string{"works/status"}, Verbs: []string{"get", "update", "patch"}},
	{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}},
}

// tokenRenewalRules let a syncer that authenticates as a service account
// renew its own short-lived token before it expires, and nothing else.
func tokenRenewalRules(serviceAccount string) []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"serviceaccounts/token"}, ResourceNames: []string{serviceAccount}, Verbs: []string{"create"}}}
}

// grant gives the member's identity the rules in namespace ns, with a Role
// and RoleBinding; owned ones (in root:fleet) the MemberCluster owns, and
// they go when it does.
func grant(ctx context.Context, c client.Client, mc *clusterv1beta1.MemberCluster, ns string, rules []rbacv1.PolicyRule, owned bool) error {
	own := func(obj client.Object) error {
		if !owned {
			return nil
		}
		return controllerutil.SetControllerReference(mc, obj, c.Scheme())
	}
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf(clusterv1beta1.RoleNameFormat, mc.Name), Namespace: ns}}
	if _, err := controllerutil.CreateOrUpdate(ctx, c, role, func() error {
		role.Rules = rules
		return own(role)
	}); err != nil {
		return fmt.Errorf("granting member cluster %s access to %s: %w", mc.Name, ns, err)
	}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf(clusterv1beta1.RoleBindingNameFormat, mc.Name), Namespace: ns}}
	_, err := controllerutil.CreateOrUpdate(ctx, c, binding, func() error {
		wantRef := rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name}
		if binding.CreationTimestamp.IsZero() {
			binding.RoleRef = wantRef
		} else if !equality.Semantic.DeepEqual(binding.RoleRef, wantRef) {
			return fmt.Errorf("RoleBinding %s/%s refers to %s %s; delete it so that it is recreated", ns, binding.Name, binding.RoleRef.Kind, binding.RoleRef.Name)
		}
		binding.Subjects = []rbacv1.Subject{mc.Spec.Identity}
		return own(binding)
	})
	if err != nil {
		return fmt.Errorf("binding member cluster %s's identity in %s: %w", mc.Name, ns, err)
	}
	return nil
}

// ensureIMC creates the InternalMemberCluster or updates its desired state;
// its status belongs to the syncer and is never written here.
func (r *Reconciler) ensureIMC(ctx context.Context, mc *clusterv1beta1.MemberCluster, ns string, state clusterv1beta1.ClusterState) (*clusterv1beta1.InternalMemberCluster, error) {
	imc := &clusterv1beta1.InternalMemberCluster{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: mc.Name}, imc)
	if apierrors.IsNotFound(err) {
		imc = &clusterv1beta1.InternalMemberCluster{
			ObjectMeta: metav1.ObjectMeta{Name: mc.Name, Namespace: ns},
			Spec:       clusterv1beta1.InternalMemberClusterSpec{State: state, HeartbeatPeriodSeconds: mc.Spec.HeartbeatPeriodSeconds},
		}
		if err := controllerutil.SetControllerReference(mc, imc, r.Client.Scheme()); err != nil {
			return nil, err
		}
		return imc, r.Client.Create(ctx, imc)
	}
	if err != nil {
		return nil, err
	}
	if imc.Spec.State == state && imc.Spec.HeartbeatPeriodSeconds == mc.Spec.HeartbeatPeriodSeconds {
		return imc, nil
	}
	patch := client.MergeFrom(imc.DeepCopy())
	imc.Spec.State = state
	imc.Spec.HeartbeatPeriodSeconds = mc.Spec.HeartbeatPeriodSeconds
	return imc, r.Client.Patch(ctx, imc, patch)
}
