package localcluster_test

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

	"github.com/fleetplane/fleetplane/test/e2e/framework"
)

// Long enough for a controller round trip on a busy 2-core machine.
const eventually = 60 * time.Second

var _ = Describe("Local member clusters", func() {
	It("run their nodes Ready, schedulable, with the requested labels and capacity", func(ctx SpecContext) {
		for i, spec := range specs {
			nodes, err := clients[i].CoreV1().Nodes().List(ctx, metav1.ListOptions{})
			Expect(err).NotTo(HaveOccurred())
			Expect(nodes.Items).To(HaveLen(len(spec.Nodes)), "cluster %s", spec.Name)
			for _, want := range spec.Nodes {
				n, err := clients[i].CoreV1().Nodes().Get(ctx, want.Name, metav1.GetOptions{})
				Expect(err).NotTo(HaveOccurred())
				Expect(n.Labels).To(HaveKeyWithValue("kubernetes.io/hostname", want.Name))
				Expect(n.Labels).To(HaveKeyWithValue("type", "kwok"))
				for k, v := range want.Labels {
					Expect(n.Labels).To(HaveKeyWithValue(k, v))
				}
				Expect(n.Status.Conditions).To(ContainElement(And(
					HaveField("Type", corev1.NodeReady), HaveField("Status", corev1.ConditionTrue))))
				Expect(n.Spec.Taints).To(BeEmpty())
				for _, res := range []corev1.ResourceList{n.Status.Capacity, n.Status.Allocatable} {
					Expect(res.Cpu().Equal(resource.MustParse(want.CPU))).To(BeTrue(), "cpu of %s: %s", n.Name, res.Cpu())
					Expect(res.Memory().Equal(resource.MustParse(want.Memory))).To(BeTrue(), "memory of %s: %s", n.Name, res.Memory())
					Expect(res.Pods().Value()).To(BeEquivalentTo(110))
				}
			}
		}
	})

	It("write an admin kubeconfig that works", func(ctx SpecContext) {
		for _, c := range clusters {
			cfg, err := clientcmd.BuildConfigFromFlags("", c.KubeconfigPath)
			Expect(err).NotTo(HaveOccurred())
			cs, err := kubernetes.NewForConfig(cfg)
			Expect(err).NotTo(HaveOccurred())
			_, err = cs.CoreV1().Namespaces().Get(ctx, "kube-system", metav1.GetOptions{})
			Expect(err).NotTo(HaveOccurred(), "cluster %s", c.Name)
		}
	})

	It("roll a 3-replica Deployment out to Available on the simulated nodes", func(ctx SpecContext) {
		cs := clients[0]
		ns := createNamespace(ctx, cs)
		d, err := cs.AppsV1().Deployments(ns).Create(ctx, deployment("web", 3), metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())

		Eventually(func(g Gomega) {
			d, err = cs.AppsV1().Deployments(ns).Get(ctx, d.Name, metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(d.Status.AvailableReplicas).To(BeEquivalentTo(3))
			g.Expect(d.Status.Conditions).To(ContainElement(And(
				HaveField("Type", appsv1.DeploymentAvailable), HaveField("Status", corev1.ConditionTrue))))
		}).WithContext(ctx).WithTimeout(eventually).Should(Succeed())

		pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
		Expect(err).NotTo(HaveOccurred())
		Expect(pods.Items).To(HaveLen(3))
		var nodeNames []string
		for _, n := range specs[0].Nodes {
			nodeNames = append(nodeNames, n.Name)
		}
		for _, p := range pods.Items {
			Expect(p.Spec.NodeName).To(BeElementOf(nodeNames), "pod %s", p.Name)
			Expect(p.Status.Phase).To(Equal(corev1.PodRunning))
			Expect(p.Status.PodIP).NotTo(BeEmpty())
			Expect(p.Status.HostIP).NotTo(BeEmpty())
			// Set by the ServiceAccount admission plugin, which envtest disables.
			Expect(p.Spec.ServiceAccountName).To(Equal("default"))
		}
	})

	It("finish deleting a namespace with objects in it", func(ctx SpecContext) {
		cs := clients[1]
		ns := createNamespace(ctx, cs)
		_, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "settings"}, Data: map[string]string{"a": "b"},
		}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		_, err = cs.AppsV1().Deployments(ns).Create(ctx, deployment("web", 1), metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())

		Expect(cs.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})).To(Succeed())
		Eventually(func() error {
			_, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
			return err
		}).WithContext(ctx).WithTimeout(eventually).Should(Satisfy(apierrors.IsNotFound))
	})

	It("garbage-collect the ReplicaSet of a deleted Deployment", func(ctx SpecContext) {
		cs := clients[0]
		ns := createNamespace(ctx, cs)
		d, err := cs.AppsV1().Deployments(ns).Create(ctx, deployment("web", 1), metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		var rsName string
		Eventually(func(g Gomega) {
			rss, err := cs.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(rss.Items).To(HaveLen(1))
			g.Expect(rss.Items[0].OwnerReferences).To(ContainElement(HaveField("UID", d.UID)))
			rsName = rss.Items[0].Name
		}).WithContext(ctx).WithTimeout(eventually).Should(Succeed())

		// Background: the API server deletes the Deployment at once and only
		// the garbage collector can remove its ReplicaSet.
		Expect(cs.AppsV1().Deployments(ns).Delete(ctx, d.Name, metav1.DeleteOptions{
			PropagationPolicy: ptr.To(metav1.DeletePropagationBackground),
		})).To(Succeed())
		Eventually(func() error {
			_, err := cs.AppsV1().ReplicaSets(ns).Get(ctx, rsName, metav1.GetOptions{})
			return err
		}).WithContext(ctx).WithTimeout(eventually).Should(Satisfy(apierrors.IsNotFound))
	})

	It("run a Job to completion", func(ctx SpecContext) {
		for i, cs := range clients {
			ns := createNamespace(ctx, cs)
			job := &batchv1.Job{
				ObjectMeta: metav1.ObjectMeta{Name: "once"},
				Spec: batchv1.JobSpec{
					Completions: ptr.To[int32](2),
					Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
						RestartPolicy: corev1.RestartPolicyNever,
						Containers:    []corev1.Container{{Name: "main", Image: "busybox"}},
					}},
				},
			}
			_, err := cs.BatchV1().Jobs(ns).Create(ctx, job, metav1.CreateOptions{})
			Expect(err).NotTo(HaveOccurred())
			Eventually(func(g Gomega) {
				job, err = cs.BatchV1().Jobs(ns).Get(ctx, job.Name, metav1.GetOptions{})
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(job.Status.Succeeded).To(BeEquivalentTo(2))
				g.Expect(job.Status.Conditions).To(ContainElement(And(
					HaveField("Type", batchv1.JobComplete), HaveField("Status", corev1.ConditionTrue))))
			}).WithContext(ctx).WithTimeout(eventually).Should(Succeed(), "cluster %s", clusters[i].Name)
		}
	})
})

// createNamespace creates a namespace of the spec's own and deletes it after.
func createNamespace(ctx context.Context, cs kubernetes.Interface) string {
	ns, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{Name: framework.UniqueName("e2e")},
	}, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func(ctx SpecContext) {
		err := cs.CoreV1().Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{})
		if !apierrors.IsNotFound(err) {
			Expect(err).NotTo(HaveOccurred())
		}
	})
	return ns.Name
}

func deployment(name string, replicas int32) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				// kwok fakes the containers; the image is never pulled.
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}},
			},
		},
	}
}
