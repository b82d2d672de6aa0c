package localcluster

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
)

// NodeSpec is a node kwok simulates.
type NodeSpec struct {
	Name   string
	Labels map[string]string
	// CPU and Memory are the node's capacity as resource quantities
	// ("4", "16Gi"); empty means 4 CPUs and 16Gi.
	CPU    string
	Memory string
}

const (
	// podsPerNode is the kubelet's default pod capacity.
	podsPerNode = "110"
	// maxNodes keeps node IPs and pod CIDRs within one octet.
	maxNodes = 250
)

// buildNodes turns the specs into Nodes before anything starts, so that a bad
// quantity fails fast.
func buildNodes(specs []NodeSpec) ([]*corev1.Node, error) {
	if len(specs) > maxNodes {
		return nil, fmt.Errorf("%d nodes: at most %d", len(specs), maxNodes)
	}
	nodes := make([]*corev1.Node, 0, len(specs))
	for i, spec := range specs {
		n, err := nodeFor(i, spec)
		if err != nil {
			return nil, err
		}
		nodes = append(nodes, n)
	}
	return nodes, nil
}

func nodeFor(i int, spec NodeSpec) (*corev1.Node, error) {
	capacity := corev1.ResourceList{corev1.ResourcePods: resource.MustParse(podsPerNode)}
	for name, value := range map[corev1.ResourceName]string{
		corev1.ResourceCPU:    orDefault(spec.CPU, "4"),
		corev1.ResourceMemory: orDefault(spec.Memory, "16Gi"),
	} {
		q, err := resource.ParseQuantity(value)
		if err != nil {
			return nil, fmt.Errorf("node %s: %s %q: %w", spec.Name, name, value, err)
		}
		capacity[name] = q
	}
	// The labels a kubelet sets on itself, plus kwok's customary type=kwok.
	labels := map[string]string{
		corev1.LabelHostname:   spec.Name,
		corev1.LabelOSStable:   "linux",
		corev1.LabelArchStable: "amd64",
		"type":                 "kwok",
	}
	for k, v := range spec.Labels {
		labels[k] = v
	}
	podCIDR := fmt.Sprintf("10.244.%d.0/24", i)
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        spec.Name,
			Labels:      labels,
			Annotations: map[string]string{kwokNodeAnnotation: "fake"},
		},
		// kwok hands out pod IPs from the node's range (as nodeipam would
		// assign it); without one all pods share a single /24.
		Spec: corev1.NodeSpec{PodCIDR: podCIDR, PodCIDRs: []string{podCIDR}},
		// A node's status may be set on create. kwok's node-initialize stage
		// keeps capacity, allocatable and addresses (pods' hostIP comes from
		// the InternalIP) and adds the Ready condition.
		Status: corev1.NodeStatus{
			Capacity:    capacity,
			Allocatable: capacity.DeepCopy(),
			Addresses: []corev1.NodeAddress{
				{Type: corev1.NodeInternalIP, Address: fmt.Sprintf("172.18.0.%d", i+2)},
				{Type: corev1.NodeHostName, Address: spec.Name},
			},
		},
	}, nil
}

func orDefault(value, def string) string {
	if value == "" {
		return def
	}
	return value
}

// createNodes creates the nodes; a cluster started again on its state has
// them already, with what ran on them.
func createNodes(ctx context.Context, cs kubernetes.Interface, nodes []*corev1.Node) error {
	for _, n := range nodes {
		if _, err := cs.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating node %s: %w", n.Name, err)
		}
	}
	return nil
}

// waitUsable waits until pods can run: every node is Ready and has lost the
// not-ready taint the API server puts on new nodes (the nodelifecycle
// controller removes it), and the default ServiceAccount, which the
// ServiceAccount admission plugin requires of every pod, exists.
func (c *Cluster) waitUsable(ctx context.Context, cs kubernetes.Interface, nodes []*corev1.Node) error {
	var pending string
	err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		for _, p := range c.procs {
			if err := p.checkRunning(); err != nil {
				return false, err
			}
		}
		for _, want := range nodes {
			n, err := cs.CoreV1().Nodes().Get(ctx, want.Name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			if !nodeReady(n) {
				pending = "node " + n.Name + " Ready"
				return false, nil
			}
			if hasTaint(n, corev1.TaintNodeNotReady) {
				pending = "node " + n.Name + " losing taint " + corev1.TaintNodeNotReady
				return false, nil
			}
		}
		_, err := cs.CoreV1().ServiceAccounts(metav1.NamespaceDefault).Get(ctx, "default", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			pending = "ServiceAccount default/default"
			return false, nil
		}
		return err == nil, err
	})
	if err != nil && pending != "" {
		return fmt.Errorf("waiting for %s: %w", pending, err)
	}
	return err
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func hasTaint(n *corev1.Node, key string) bool {
	for _, t := range n.Spec.Taints {
		if t.Key == key {
			return true
		}
	}
	return false
}
