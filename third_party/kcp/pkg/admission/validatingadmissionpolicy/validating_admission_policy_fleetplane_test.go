package validatingadmissionpolicy

import (
	"context"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"

	kcpkubernetesinformers "github.com/kcp-dev/client-go/informers"
	kcpfakekubernetes "github.com/kcp-dev/client-go/kubernetes/fake"
	"github.com/kcp-dev/logicalcluster/v3"
)

// A workspace that binds no policy gets no plugin of its own; one that
// binds a policy (from the start, or once it creates a binding), or
// already has its plugin, does; before the bindings are known every
// workspace does.
func TestMayApplyOnlyWhereAPolicyIsBound(t *testing.T) {
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{
		Name: "syncer-works", Annotations: map[string]string{logicalcluster.AnnotationKey: "platform"}}}
	client := kcpfakekubernetes.NewSimpleClientset(binding)
	factory := kcpkubernetesinformers.NewSharedInformerFactory(client, 0)
	k := NewKubeValidatingAdmissionPolicy()
	k.SetKubeInformers(factory, factory)

	if !k.mayApply("team") {
		t.Errorf("before the bindings' informer synced, a workspace must get its plugin")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), k.bindings.Informer().HasSynced) {
		t.Fatal("the bindings' informer did not sync")
	}
	if !k.mayApply("platform") {
		t.Errorf("a workspace that binds a policy must get its plugin")
	}
	if k.mayApply("team") {
		t.Errorf("a workspace that binds no policy needs no plugin")
	}
	teamBinding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: "team-policy", Annotations: map[string]string{logicalcluster.AnnotationKey: "team"}}}
	if _, err := client.Cluster(logicalcluster.NewPath("team")).AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Create(ctx, teamBinding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return k.mayApply("team"), nil
	}); err != nil {
		t.Errorf("a workspace that binds a policy from now on must get its plugin: %v", err)
	}
	k.delegates["other"] = &stoppableValidatingAdmissionPolicy{}
	if !k.mayApply("other") {
		t.Errorf("a workspace that has its plugin keeps using it")
	}
}
