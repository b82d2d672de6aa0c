// Package properties collects the properties of a member cluster that the
// scheduler uses: node count, Kubernetes version and CPU/memory capacity,
// allocatable and available. Providers are pluggable; the default one reads
// nodes and pods from watch caches.
package properties

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	resourcehelper "k8s.io/component-helpers/resource"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
)

// Collection is one observation of a member cluster.
type Collection struct {
	Properties map[clusterv1beta1.PropertyName]clusterv1beta1.PropertyValue
	Resources  clusterv1beta1.ResourceUsage
	// Namespaces maps the cluster's namespaces to the Work that created
	// each ("" if no Work did); ResourcePlacements only go to clusters that
	// have their namespace.
	Namespaces map[string]string
	// Conditions are extra conditions a provider wants on the cluster.
	Conditions []metav1.Condition
}

// Provider exposes properties of the member cluster it runs next to.
type Provider interface {
	// Start prepares the provider (e.g. starts watches) and returns once it
	// can collect; it must not block beyond that.
	Start(ctx context.Context, member *rest.Config) error
	// Collect returns the current properties; it is called on every heartbeat.
	Collect(ctx context.Context) (Collection, error)
}

// Default is the built-in provider: nodes, pods and namespaces from watch
// caches.
type Default struct {
	client     kubernetes.Interface
	nodes      corelisters.NodeLister
	pods       corelisters.PodLister
	namespaces corelisters.NamespaceLister
	// changed receives a value when a namespace comes or goes, so that the
	// syncer reports it without waiting for the next heartbeat.
	changed chan struct{}
}

// NamespacesChanged signals namespace additions and removals once Start
// has run.
func (d *Default) NamespacesChanged() <-chan struct{} { return d.changed }

func (d *Default) notify() {
	select {
	case d.changed <- struct{}{}:
	default: // one pending signal is enough
	}
}

var _ Provider = &Default{}

// Start starts node and pod watches; only pods that still hold resources
// (not Succeeded or Failed) are cached.
func (d *Default) Start(ctx context.Context, member *rest.Config) error {
	c, err := kubernetes.NewForConfig(member)
	if err != nil {
		return err
	}
	d.client = c
	d.changed = make(chan struct{}, 1)
	nodes := informers.NewSharedInformerFactoryWithOptions(c, 0, informers.WithTransform(slim))
	pods := informers.NewSharedInformerFactoryWithOptions(c, 0, informers.WithTransform(slim), informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.FieldSelector = "status.phase!=Succeeded,status.phase!=Failed"
	}))
	d.nodes = nodes.Core().V1().Nodes().Lister()
	d.pods = pods.Core().V1().Pods().Lister()
	d.namespaces = nodes.Core().V1().Namespaces().Lister()
	if _, err := nodes.Core().V1().Namespaces().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { d.notify() },
		DeleteFunc: func(any) { d.notify() },
	}); err != nil {
		return err
	}
	for _, f := range []informers.SharedInformerFactory{nodes, pods} {
		f.Start(ctx.Done())
		for informer, ok := range f.WaitForCacheSync(ctx.Done()) {
			if !ok {
				return fmt.Errorf("watch cache for %v did not sync", informer)
			}
		}
	}
	return nil
}

// slim keeps of nodes, pods and namespaces only what Collect reads: a
// member's pods, with their full specs and statuses, would otherwise be
// most of the syncer's memory.
func slim(obj any) (any, error) {
	switch o := obj.(type) {
	case *corev1.Node:
		return &corev1.Node{ObjectMeta: identity(o.ObjectMeta),
			Status: corev1.NodeStatus{Capacity: o.Status.Capacity, Allocatable: o.Status.Allocatable}}, nil
	case *corev1.Pod:
		return &corev1.Pod{ObjectMeta: identity(o.ObjectMeta), Spec: corev1.PodSpec{
			NodeName: o.Spec.NodeName, Containers: requests(o.Spec.Containers), InitContainers: requests(o.Spec.InitContainers),
			Overhead: o.Spec.Overhead, Resources: o.Spec.Resources,
		}, Status: corev1.PodStatus{Phase: o.Status.Phase}}, nil
	case *corev1.Namespace:
		m := identity(o.ObjectMeta)
		m.OwnerReferences = o.OwnerReferences
		return &corev1.Namespace{ObjectMeta: m}, nil
	}
	return obj, nil
}

func identity(m metav1.ObjectMeta) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: m.Name, Namespace: m.Namespace, UID: m.UID, ResourceVersion: m.ResourceVersion}
}

// requests keeps what a pod's resource requests are computed from.
func requests(containers []corev1.Container) []corev1.Container {
	out := make([]corev1.Container, len(containers))
	for i, c := range containers {
		out[i] = corev1.Container{Name: c.Name, Resources: c.Resources, RestartPolicy: c.RestartPolicy}
	}
	return out
}

// Collect sums node capacity and allocatable and subtracts what scheduled
// pods request to get what is available.
func (d *Default) Collect(ctx context.Context) (Collection, error) {
	now := metav1.NewTime(time.Now())
	nodes, err := d.nodes.List(labels.Everything())
	if err != nil {
		return Collection{}, err
	}
	pods, err := d.pods.List(labels.Everything())
	if err != nil {
		return Collection{}, err
	}
	version, err := d.client.Discovery().ServerVersion()
	if err != nil {
		return Collection{}, fmt.Errorf("reading the member's Kubernetes version: %w", err)
	}
	namespaces, err := d.namespaces.List(labels.Everything())
	if err != nil {
		return Collection{}, err
	}
	usage := Usage(nodes, pods)
	usage.ObservationTime = now
	return Collection{
		Namespaces: Namespaces(namespaces),
		Properties: map[clusterv1beta1.PropertyName]clusterv1beta1.PropertyValue{
			clusterv1beta1.NodeCountProperty:  {Value: fmt.Sprint(len(nodes)), ObservationTime: now},
			clusterv1beta1.K8sVersionProperty: {Value: version.GitVersion, ObservationTime: now},
		},
		Resources: usage,
	}, nil
}

// Namespaces maps namespaces to the Work whose AppliedWork owns them.
func Namespaces(list []*corev1.Namespace) map[string]string {
	out := make(map[string]string, len(list))
	for _, ns := range list {
		out[ns.Name] = ""
		for _, ref := range ns.OwnerReferences {
			if ref.Kind == "AppliedWork" {
				out[ns.Name] = ref.Name
			}
		}
	}
	return out
}

// trackedResources are the resources reported in the cluster's resource usage.
var trackedResources = []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory}

// Usage computes capacity, allocatable and available CPU and memory from
// nodes and the non-terminal pods bound to them.
func Usage(nodes []*corev1.Node, pods []*corev1.Pod) clusterv1beta1.ResourceUsage {
	capacity, allocatable, requested := zero(), zero(), zero()
	for _, n := range nodes {
		add(capacity, n.Status.Capacity)
		add(allocatable, n.Status.Allocatable)
	}
	for _, p := range pods {
		if p.Spec.NodeName == "" || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		add(requested, resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{}))
	}
	available := zero()
	for _, name := range trackedResources {
		q := allocatable[name].DeepCopy()
		q.Sub(requested[name])
		if q.Sign() < 0 {
			q = resource.Quantity{Format: q.Format}
		}
		available[name] = q
	}
	return clusterv1beta1.ResourceUsage{Capacity: capacity, Allocatable: allocatable, Available: available}
}

func zero() corev1.ResourceList {
	l := corev1.ResourceList{}
	for _, name := range trackedResources {
		l[name] = resource.Quantity{}
	}
	return l
}

func add(sum, more corev1.ResourceList) {
	for _, name := range trackedResources {
		if q, ok := more[name]; ok {
			s := sum[name]
			s.Add(q)
			sum[name] = s
		}
	}
}
