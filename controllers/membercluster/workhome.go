package membercluster

import (
	"context"
	"errors"
	"fmt"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
	"github.com/fleetplane/fleetplane/internal/workhomes"
)

// WorkHomeControllerName names the controller of a shard's home of Work.
const WorkHomeControllerName = "fleet-work-home"

// homeTokenLifetime is the lifetime of the token a shard gives a member's
// syncer for its works workspace; the syncer renews it itself (for the same
// lifetime) once it uses it, so the shard issues a new one about twice a
// day per member.
const homeTokenLifetime = 24 * time.Hour

// homeTokenExpiresAnnotation, on a home's Secret, is when its token expires.
const homeTokenExpiresAnnotation = "fleetplane.io/token-expires"

// homeSyncerRules are what a member's syncer may do in its namespace of a
// shard's works workspace: what it may do with Work in root:fleet.
var homeSyncerRules = workRules

// WorkHomeReconciler runs on a shard other than root and gives each member
// its place in the shard's works workspace (workspaces/bootstrap.WorkHome):
// the member's namespace, its identity's service account and the RBAC of
// its syncer there, as root:fleet has them, and, in the member's namespace
// of root:fleet, a Secret naming the workspace with a token of that
// service account (internal/workhomes). Once the member is gone from
// root:fleet, it removes them, releasing what Works are left (the member
// keeps what was applied).
type WorkHomeReconciler struct {
	// Fleet is the client of root:fleet (members read from its cache).
	Fleet client.Client
	// Home is the shard's works workspace.
	Home  cluster.Cluster
	Shard string
	// Cluster is the works workspace's logical cluster.
	Cluster string
	Clock   clock.PassiveClock
}

// SetupWithManager registers the controller on the manager of root:fleet.
// Members are looked at when they come, change their spec or go (not at
// each heartbeat); the service accounts in the works workspace bring back
// those that went while the shard was down.
func (r *WorkHomeReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named(WorkHomeControllerName).
		For(&clusterv1beta1.MemberCluster{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		WatchesRawSource(source.Kind(r.Home.GetCache(), &corev1.ServiceAccount{},
			handler.TypedEnqueueRequestsFromMapFunc(func(_ context.Context, sa *corev1.ServiceAccount) []reconcile.Request {
				if member := sa.Labels[memberLabel]; member != "" {
					return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: member}}}
				}
				return nil
			}))).
		Complete(r)
}

// Reconcile gives a member its place in the works workspace, or removes it
// once the member is gone. A member that is leaving keeps it until then:
// its syncer releases its Works here too before it confirms.
func (r *WorkHomeReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	mc := &clusterv1beta1.MemberCluster{}
	err := r.Fleet.Get(ctx, req.NamespacedName, mc)
	if apierrors.IsNotFound(err) {
		return r.remove(ctx, req.Name)
	}
	if err != nil || !mc.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, err
	}
	ns := namespaceFor(mc.Name)
	if err := createNamespace(ctx, r.Home.GetClient(), ns); err != nil {
		return requeueWhileGoing(err)
	}
	if err := grant(ctx, r.Home.GetClient(), mc, ns, homeSyncerRules, false); err != nil {
		return ctrl.Result{}, err
	}
	id := mc.Spec.Identity
	if id.Kind != rbacv1.ServiceAccountKind || id.Namespace == "" {
		// Another kind of identity (a user of a client certificate, say)
		// authenticates on every shard as it does on the root shard.
		return ctrl.Result{}, r.publish(ctx, mc, workhomes.Home{Shard: r.Shard, Cluster: r.Cluster}, time.Time{})
	}
	if err := r.ensureServiceAccount(ctx, mc); err != nil {
		return requeueWhileGoing(err)
	}
	return r.publishToken(ctx, mc)
}

// errNamespaceGoing: a namespace to create is still being deleted, as when
// a member leaves and joins again at once.
var errNamespaceGoing = errors.New("still being deleted")

// requeueWhileGoing looks again shortly at a member whose namespace is
// still being deleted (nothing here watches namespaces go).
func requeueWhileGoing(err error) (ctrl.Result, error) {
	if errors.Is(err, errNamespaceGoing) {
		return ctrl.Result{RequeueAfter: time.Second}, nil
	}
	return ctrl.Result{}, err
}

// ensureServiceAccount makes the member's identity here, with the right
// to renew its own token.
func (r *WorkHomeReconciler) ensureServiceAccount(ctx context.Context, mc *clusterv1beta1.MemberCluster) error {
	id := mc.Spec.Identity
	if err := createNamespace(ctx, r.Home.GetClient(), id.Namespace); err != nil {
		return err
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: id.Namespace, Name: id.Name,
		Labels: map[string]string{clusterv1beta1.FleetResourceLabelKey: "true", memberLabel: mc.Name}}}
	if err := create(ctx, r.Home.GetClient(), sa); err != nil {
		return fmt.Errorf("creating the service account %s/%s of member cluster %s: %w", id.Namespace, id.Name, mc.Name, err)
	}
	return grant(ctx, r.Home.GetClient(), mc, id.Namespace, tokenRenewalRules(id.Name), false)
}

// publishToken writes the home's Secret with a new token once the one it
// holds is past half its life.
func (r *WorkHomeReconciler) publishToken(ctx context.Context, mc *clusterv1beta1.MemberCluster) (ctrl.Result, error) {
	current := &corev1.Secret{}
	err := r.Fleet.Get(ctx, client.ObjectKey{Namespace: namespaceFor(mc.Name), Name: workhomes.SecretName(r.Shard)}, current)
	if client.IgnoreNotFound(err) != nil {
		return ctrl.Result{}, err
	}
	renewAt := r.Clock.Now()
	if expires, perr := time.Parse(time.RFC3339, current.Annotations[homeTokenExpiresAnnotation]); err == nil && perr == nil {
		renewAt = expires.Add(-homeTokenLifetime / 2)
	}
	if wait := renewAt.Sub(r.Clock.Now()); wait > 0 {
		return ctrl.Result{RequeueAfter: wait}, nil
	}
	id := mc.Spec.Identity
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: id.Namespace, Name: id.Name}}
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(homeTokenLifetime.Seconds()))}}
	if err := r.Home.GetClient().SubResource("token").Create(ctx, sa, tr); err != nil {
		return ctrl.Result{}, fmt.Errorf("issuing a token of %s/%s for member cluster %s: %w", id.Namespace, id.Name, mc.Name, err)
	}
	home := workhomes.Home{Shard: r.Shard, Cluster: r.Cluster, Token: tr.Status.Token}
	if err := r.publish(ctx, mc, home, tr.Status.ExpirationTimestamp.Time); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: homeTokenLifetime / 2}, nil
}

// publish writes the home's Secret in the member's namespace of root:fleet
// (which the root shard makes when the member joins; until then, the
// member is looked at again).
func (r *WorkHomeReconciler) publish(ctx context.Context, mc *clusterv1beta1.MemberCluster, home workhomes.Home, expires time.Time) error {
	want := home.Secret(namespaceFor(mc.Name))
	if !expires.IsZero() {
		want.Annotations = map[string]string{homeTokenExpiresAnnotation: expires.UTC().Format(time.RFC3339)}
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: want.Namespace, Name: want.Name}}
	_, err := controllerutil.CreateOrUpdate(ctx, r.Fleet, secret, func() error {
		secret.Labels, secret.Annotations, secret.Type, secret.Data = want.Labels, want.Annotations, want.Type, want.Data
		return nil
	})
	if err != nil {
		return fmt.Errorf("telling member cluster %s's syncer of shard %s's home of Work: %w", mc.Name, r.Shard, err)
	}
	return nil
}

// remove takes a gone member's place out of the works workspace: its
// service account first (revoking its tokens), then its namespace, the
// Works left in it released as root:fleet's are.
func (r *WorkHomeReconciler) remove(ctx context.Context, member string) (ctrl.Result, error) {
	accounts := &corev1.ServiceAccountList{}
	if err := r.Home.GetClient().List(ctx, accounts, client.MatchingLabels{memberLabel: member}); err != nil {
		return ctrl.Result{}, err
	}
	for i := range accounts.Items {
		if err := r.Home.GetClient().Delete(ctx, &accounts.Items[i]); client.IgnoreNotFound(err) != nil {
			return ctrl.Result{}, fmt.Errorf("removing the service account of member cluster %s from shard %s's home of Work: %w", member, r.Shard, err)
		}
	}
	gone, err := removeNamespace(ctx, r.Home.GetClient(), namespaceFor(member))
	if err != nil || !gone {
		return ctrl.Result{RequeueAfter: time.Second}, err
	}
	return ctrl.Result{}, nil
}

// memberLabel marks what a shard's home of Work holds for a member.
const memberLabel = "fleetplane.io/member"

// createNamespace creates namespace ns unless it exists; one that is
// still being deleted is errNamespaceGoing.
func createNamespace(ctx context.Context, c client.Client, ns string) error {
	namespace := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{clusterv1beta1.FleetResourceLabelKey: "true"}}}
	if err := create(ctx, c, namespace); err != nil {
		return fmt.Errorf("creating namespace %s: %w", ns, err)
	}
	if !namespace.DeletionTimestamp.IsZero() {
		return fmt.Errorf("namespace %s is %w", ns, errNamespaceGoing)
	}
	return nil
}

// create creates obj unless the cache has it.
func create(ctx context.Context, c client.Client, obj client.Object) error {
	err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj)
	if !apierrors.IsNotFound(err) {
		return err
	}
	return client.IgnoreAlreadyExists(c.Create(ctx, obj))
}
