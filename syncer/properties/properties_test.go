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

// What the watch caches keep of nodes and pods gives the same usage as the
// objects themselves, sidecars and pod overhead included.
func TestSlimKeepsUsage(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	full := pod("n1", "500m", "1Gi", corev1.PodRunning)
	full.Labels = map[string]string{"app": "web"}
	full.Spec.Containers[0].Image, full.Spec.Containers[0].Env = "nginx", []corev1.EnvVar{{Name: "A", Value: "b"}}
	full.Spec.InitContainers = []corev1.Container{{Name: "proxy", Image: "envoy", RestartPolicy: &always, Resources: corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")}}}}
	full.Spec.Overhead = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}
	full.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	n := node("4", "8Gi")
	n.Status.Images = []corev1.ContainerImage{{Names: []string{"nginx"}, SizeBytes: 1 << 20}}

	slimNode, _ := slim(n)
	slimPod, _ := slim(full)
	want := Usage([]*corev1.Node{n}, []*corev1.Pod{full})
	got := Usage([]*corev1.Node{slimNode.(*corev1.Node)}, []*corev1.Pod{slimPod.(*corev1.Pod)})
	for _, r := range trackedResources {
		gotAvail, wantAvail, gotCap, wantCap := got.Available[r], want.Available[r], got.Capacity[r], want.Capacity[r]
		if gotAvail.Cmp(wantAvail) != 0 || gotCap.Cmp(wantCap) != 0 {
			t.Errorf("%s: slim objects give available %s capacity %s, the full ones %s and %s", r,
				gotAvail.String(), gotCap.String(), wantAvail.String(), wantCap.String())
		}
	}
	if p := slimPod.(*corev1.Pod); p.Labels != nil || p.Spec.Containers[0].Image != "" || p.Status.Conditions != nil {
		t.Errorf("slim kept more than usage needs: %+v", p)
	}
}
