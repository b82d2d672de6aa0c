package clients

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache/informertest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func TestSyncedReaderRefusesUnsyncedCache(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		synced  bool
		wantErr bool
	}{
		{name: "synced", synced: true},
		{name: "not synced", synced: false, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := SyncedReader(&informertest.FakeInformers{Synced: ptr.To(tc.synced)})
			listErr := r.List(ctx, &corev1.ConfigMapList{})
			getErr := r.Get(ctx, client.ObjectKey{Name: "x"}, &corev1.ConfigMap{})
			for op, err := range map[string]error{"List": listErr, "Get": getErr} {
				if (err != nil) != tc.wantErr {
					t.Errorf("%s: error %v, want error: %v", op, err, tc.wantErr)
				}
			}
		})
	}
}
