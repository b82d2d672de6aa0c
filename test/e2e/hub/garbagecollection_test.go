package hub

import (
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetplane/fleetplane/test/e2e/framework"
)

// kcp's garbage collector works from the hub's metadata informers, which
// keep only identity, owners, deletion and kcp's own labels and
// annotations of each object; owner references must still cascade, in the
// background and in the foreground, and be released when orphaning, for a
// team's own objects (the owners' labels and annotations are dropped).
var _ = Describe("Garbage collection in a team workspace", func() {
	It("deletes a team's dependents with their owner in the background and in the foreground, and orphans them on request", func(ctx SpecContext) {
		path, err := hub.CreateTeamWorkspace(ctx, framework.UniqueName("gc"))
		Expect(err).NotTo(HaveOccurred())
		team, err := hub.TeamAdmin(ctx, path, "team-gc")
		Expect(err).NotTo(HaveOccurred())
		c, err := client.New(team, client.Options{})
		Expect(err).NotTo(HaveOccurred())

		for _, policy := range []metav1.DeletionPropagation{metav1.DeletePropagationBackground, metav1.DeletePropagationForeground} {
			owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "owner-" + strings.ToLower(string(policy)),
				Labels: map[string]string{"app": "web"}, Annotations: map[string]string{"team": "gc"}}}
			Expect(c.Create(ctx, owner)).To(Succeed())
			dependent := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "dependent-" + strings.ToLower(string(policy)),
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID,
					BlockOwnerDeletion: ptr.To(true)}}}}
			Expect(c.Create(ctx, dependent)).To(Succeed())

			Expect(c.Delete(ctx, owner, client.PropagationPolicy(policy))).To(Succeed())
			Eventually(func() bool {
				return apierrors.IsNotFound(c.Get(ctx, client.ObjectKeyFromObject(dependent), &corev1.ConfigMap{}))
			}).WithContext(ctx).WithTimeout(time.Minute).Should(BeTrue(), "%s deletion of %s removes %s", policy, owner.Name, dependent.Name)
			Eventually(func() bool {
				return apierrors.IsNotFound(c.Get(ctx, client.ObjectKeyFromObject(owner), &corev1.ConfigMap{}))
			}).WithContext(ctx).WithTimeout(time.Minute).Should(BeTrue(), "%s is gone once its dependent is", owner.Name)
		}

		By("orphaning, a dependent outlives its owner and loses the reference")
		owner := framework.ConfigMap("default", "owner-orphan", nil)
		Expect(c.Create(ctx, owner)).To(Succeed())
		dependent := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "dependent-orphan",
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID}}}}
		Expect(c.Create(ctx, dependent)).To(Succeed())
		Expect(c.Delete(ctx, owner, client.PropagationPolicy(metav1.DeletePropagationOrphan))).To(Succeed())
		Eventually(func(g Gomega) {
			got := &corev1.ConfigMap{}
			g.Expect(c.Get(ctx, client.ObjectKeyFromObject(dependent), got)).To(Succeed())
			g.Expect(got.OwnerReferences).To(BeEmpty())
			g.Expect(apierrors.IsNotFound(c.Get(ctx, client.ObjectKeyFromObject(owner), &corev1.ConfigMap{}))).To(BeTrue())
		}).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed())
	})
})
