package properties

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func node(cpu, mem string) *corev1.Node {
	l := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}
	return &corev1.Node{Status: corev1.NodeStatus{Capacity: l, Allocatable: l}}
}

func pod(nodeName, cpu, mem string, phase corev1.PodPhase) *corev1.Pod {
	return &corev1.Pod{
		Spec: corev1.PodSpec{NodeName: nodeName, Containers: []corev1.Container{{Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)},
		}}}},
		Status: corev1.PodStatus{Phase: phase},
	}
}

func TestUsage(t *testing.T) {
	nodes := []*corev1.Node{node("4", "8Gi"), node("2", "4Gi")}
	pods := []*corev1.Pod{
		pod("n1", "500m", "1Gi", corev1.PodRunning),
		pod("n2", "1", "1Gi", corev1.PodPending),
		pod("", "8", "1Gi", corev1.PodPending),     // not scheduled: holds nothing
		pod("n1", "1", "1Gi", corev1.PodSucceeded), // finished: holds nothing
	}
	u := Usage(nodes, pods)
	check := func(what string, got resource.Quantity, want string) {
		t.Helper()
		if got.Cmp(resource.MustParse(want)) != 0 {
			t.Errorf("%s = %s, want %s", what, got.String(), want)
		}
	}
	check("capacity cpu", u.Capacity[corev1.ResourceCPU], "6")
	check("allocatable memory", u.Allocatable[corev1.ResourceMemory], "12Gi")
	check("available cpu", u.Available[corev1.ResourceCPU], "4500m")
	check("available memory", u.Available[corev1.ResourceMemory], "10Gi")

	over := Usage([]*corev1.Node{node("1", "1Gi")}, []*corev1.Pod{pod("n", "2", "2Gi", corev1.PodRunning)})
	check("available never negative", over.Available[corev1.ResourceCPU], "0")
}
