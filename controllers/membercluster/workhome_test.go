package membercluster

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"github.com/fleetplane/fleetplane/internal/workhomes"
)

// fakeHome is a shard's works workspace with a fake client.
type fakeHome struct {
	cluster.Cluster
	c client.Client
}

func (h fakeHome) GetClient() client.Client { return h.c }

// A shard gives a member its namespace, service account and syncer RBAC in
// its works workspace, and names the workspace, with a token there, in the
// member's namespace of root:fleet; once the member is gone it revokes the
// account and removes the namespace.
func TestWorkHomeGivesAMemberItsPlaceAndTakesItBack(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	_, fleet := newReconciler(t, now, member("m1"), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "fleet-member-m1"}})
	home := fake.NewClientBuilder().WithScheme(fleet.Scheme()).Build()
	homes := &WorkHomeReconciler{Fleet: fleet, Home: fakeHome{c: home}, Shard: "shard-1", Cluster: "2xk9", Clock: clocktesting.NewFakeClock(now)}
	req := ctrl.Request{NamespacedName: client.ObjectKey{Name: "m1"}}
	res, err := homes.Reconcile(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if res.RequeueAfter != homeTokenLifetime/2 {
		t.Errorf("requeued after %s, want the token's half life %s", res.RequeueAfter, homeTokenLifetime/2)
	}
	for _, obj := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "fleet-member-m1"}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "fleet-system", Name: "syncer"}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "fleet-member-m1", Name: "fleet-rolebinding-m1"}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "fleet-system", Name: "fleet-rolebinding-m1"}},
	} {
		if err := home.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			t.Errorf("%T %s in the works workspace: %v", obj, client.ObjectKeyFromObject(obj), err)
		}
	}
	role := &rbacv1.Role{}
	if err := home.Get(ctx, client.ObjectKey{Namespace: "fleet-member-m1", Name: "fleet-role-m1"}, role); err != nil || len(role.Rules) != len(workRules) {
		t.Errorf("the syncer's Role in the works workspace: %+v, %v; want the rules of Work alone", role.Rules, err)
	}
	secret := &corev1.Secret{}
	if err := fleet.Get(ctx, client.ObjectKey{Namespace: "fleet-member-m1", Name: workhomes.SecretName("shard-1")}, secret); err != nil {
		t.Fatal(err)
	}
	got, err := workhomes.FromSecret(secret)
	if err != nil || got.Cluster != "2xk9" || got.Token == "" {
		t.Fatalf("the home's Secret reads %+v, %v; want the workspace 2xk9 and a token", got, err)
	}

	// A second look before half the token's life issues no new token.
	if _, err := homes.Reconcile(ctx, req); err != nil {
		t.Fatal(err)
	}
	again := &corev1.Secret{}
	if err := fleet.Get(ctx, client.ObjectKeyFromObject(secret), again); err != nil || again.ResourceVersion != secret.ResourceVersion {
		t.Errorf("the home's Secret was written again (%v) before the token was half through its life", err)
	}

	// The member gone from root:fleet: its account and namespace go from
	// the works workspace.
	if err := fleet.Delete(ctx, member("m1")); err != nil {
		t.Fatal(err)
	}
	if _, err := homes.Reconcile(ctx, req); err != nil {
		t.Fatal(err)
	}
	if err := home.Get(ctx, client.ObjectKey{Namespace: "fleet-system", Name: "syncer"}, &corev1.ServiceAccount{}); !apierrors.IsNotFound(err) {
		t.Errorf("the gone member's service account: %v, want it deleted", err)
	}
	if err := home.Get(ctx, client.ObjectKey{Name: "fleet-member-m1"}, &corev1.Namespace{}); !apierrors.IsNotFound(err) {
		t.Errorf("the gone member's namespace: %v, want it deleted", err)
	}
}

// A member that joins again while its namespace of the works workspace is
// still being deleted is looked at again until the namespace is gone and
// made anew: nothing here watches it go.
func TestWorkHomeWaitsForTheNamespaceOfAMemberThatLeftToGo(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	_, fleet := newReconciler(t, now, member("m1"), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "fleet-member-m1"}})
	going := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "fleet-member-m1", DeletionTimestamp: &metav1.Time{Time: now}, Finalizers: []string{"kubernetes"}}}
	home := fake.NewClientBuilder().WithScheme(fleet.Scheme()).WithObjects(going).Build()
	homes := &WorkHomeReconciler{Fleet: fleet, Home: fakeHome{c: home}, Shard: "shard-1", Cluster: "2xk9", Clock: clocktesting.NewFakeClock(now)}
	req := ctrl.Request{NamespacedName: client.ObjectKey{Name: "m1"}}
	res, err := homes.Reconcile(ctx, req)
	if err != nil || res.RequeueAfter != time.Second {
		t.Fatalf("reconciling while the namespace goes: %+v, %v; want a look again in a second", res, err)
	}

	// The namespace gone, the next look makes it anew.
	if err := home.Get(ctx, client.ObjectKeyFromObject(going), going); err != nil {
		t.Fatal(err)
	}
	going.Finalizers = nil
	if err := home.Update(ctx, going); err != nil {
		t.Fatal(err)
	}
	if _, err := homes.Reconcile(ctx, req); err != nil {
		t.Fatal(err)
	}
	ns := &corev1.Namespace{}
	if err := home.Get(ctx, client.ObjectKeyFromObject(going), ns); err != nil || !ns.DeletionTimestamp.IsZero() {
		t.Errorf("the member's namespace after it went: %+v, %v; want it made anew", ns.ObjectMeta, err)
	}
}
