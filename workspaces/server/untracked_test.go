package server

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/storage"
)

// recordingStorage keeps what it was asked to store.
type recordingStorage struct {
	storage.Interface
	stored runtime.Object
}

func (s *recordingStorage) Create(_ context.Context, _ string, obj, _ runtime.Object, _ uint64) error {
	s.stored = obj
	return nil
}

func (s *recordingStorage) GuaranteedUpdate(_ context.Context, _ string, _ runtime.Object, _ bool, _ *storage.Preconditions,
	tryUpdate storage.UpdateFunc, _ runtime.Object) error {
	obj, _, err := tryUpdate(tracked(), storage.ResponseMeta{})
	s.stored = obj
	return err
}

func tracked() *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]interface{}{}}
	u.SetName("w")
	u.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "fleet-hub", Operation: metav1.ManagedFieldsOperationUpdate}})
	return u
}

func TestUntrackedFieldsAreNotStored(t *testing.T) {
	inner := &recordingStorage{}
	s := untrackedFields{inner}
	if err := s.Create(context.Background(), "k", tracked(), nil, 0); err != nil {
		t.Fatal(err)
	}
	if mf := inner.stored.(metav1.Object).GetManagedFields(); mf != nil {
		t.Errorf("created with managed fields %v", mf)
	}
	update := func(input runtime.Object, _ storage.ResponseMeta) (runtime.Object, *uint64, error) {
		out := input.DeepCopyObject().(*unstructured.Unstructured)
		out.SetLabels(map[string]string{"changed": "true"})
		return out, nil, nil
	}
	if err := s.GuaranteedUpdate(context.Background(), "k", nil, false, nil, update, nil); err != nil {
		t.Fatal(err)
	}
	stored := inner.stored.(metav1.Object)
	if mf := stored.GetManagedFields(); mf != nil {
		t.Errorf("updated with managed fields %v", mf)
	}
	if stored.GetLabels()["changed"] != "true" {
		t.Errorf("the update itself was lost: labels %v", stored.GetLabels())
	}
}
