package envelopes

import (
	"strings"
	"testing"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
)

func TestOpen(t *testing.T) {
	tests := []struct {
		name    string
		raw     string
		want    []string // the carried objects, as JSON
		wantID  placementv1beta1.EnvelopeIdentifier
		wantErr string
	}{{
		name: "not an envelope",
		raw:  `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"app"}}`,
	}, {
		name: "a ClusterResourceEnvelope, in key order",
		raw: `{"apiVersion":"placement.kubernetes-fleet.io/v1beta1","kind":"ClusterResourceEnvelope","metadata":{"name":"hooks"},"data":{
			"b.yaml":{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","metadata":{"name":"reader"}},
			"a.yaml":{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingWebhookConfiguration","metadata":{"name":"guard"}}}}`,
		want: []string{
			`{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingWebhookConfiguration","metadata":{"name":"guard"}}`,
			`{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","metadata":{"name":"reader"}}`,
		},
		wantID: placementv1beta1.EnvelopeIdentifier{Name: "hooks", Type: placementv1beta1.ClusterResourceEnvelopeType},
	}, {
		name: "a ResourceEnvelope gives its namespace to objects without one",
		raw: `{"apiVersion":"placement.kubernetes-fleet.io/v1beta1","kind":"ResourceEnvelope","metadata":{"name":"quota","namespace":"app"},"data":{
			"q":{"apiVersion":"v1","kind":"ResourceQuota","metadata":{"name":"q"}}}}`,
		want:   []string{`{"apiVersion":"v1","kind":"ResourceQuota","metadata":{"name":"q","namespace":"app"}}`},
		wantID: placementv1beta1.EnvelopeIdentifier{Name: "quota", Namespace: "app", Type: placementv1beta1.ResourceEnvelopeType},
	}, {
		name: "a ConfigMap annotated as KubeFleet's former envelope is an ordinary ConfigMap",
		raw: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"env","namespace":"app","annotations":{"kubernetes-fleet.io/envelope-configmap":"true"}},"data":{
			"role.yaml":"apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata:\n  name: r\n"}}`,
	}, {
		name: "a ClusterResourceEnvelope refuses namespaced objects",
		raw: `{"apiVersion":"placement.kubernetes-fleet.io/v1beta1","kind":"ClusterResourceEnvelope","metadata":{"name":"hooks"},"data":{
			"cm":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"app"}}}}`,
		wantErr: `ClusterResourceEnvelope hooks, entry "cm": ConfigMap c is namespaced (namespace app): a ClusterResourceEnvelope carries cluster-scoped objects only`,
	}, {
		name: "a ResourceEnvelope refuses cluster-scoped objects",
		raw: `{"apiVersion":"placement.kubernetes-fleet.io/v1beta1","kind":"ResourceEnvelope","metadata":{"name":"e","namespace":"app"},"data":{
			"role.yaml":{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","metadata":{"name":"reader"}}}}`,
		wantErr: `ResourceEnvelope app/e, entry "role.yaml": ClusterRole reader is cluster-scoped: a ResourceEnvelope carries namespaced objects only; put it in a ClusterResourceEnvelope`,
	}, {
		name: "a ResourceEnvelope refuses other namespaces",
		raw: `{"apiVersion":"placement.kubernetes-fleet.io/v1beta1","kind":"ResourceEnvelope","metadata":{"name":"e","namespace":"app"},"data":{
			"cm":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"other"}}}}`,
		wantErr: `ResourceEnvelope app/e, entry "cm": ConfigMap c is in namespace other`,
	}, {
		name: "an entry that is no object",
		raw: `{"apiVersion":"placement.kubernetes-fleet.io/v1beta1","kind":"ResourceEnvelope","metadata":{"name":"env","namespace":"app"},"data":{
			"bad.yaml":["just","a list"]}}`,
		wantErr: `ResourceEnvelope app/env, entry "bad.yaml": not a single Kubernetes object`,
	}, {
		name: "an entry with generateName and no name goes on, for its member to report",
		raw: `{"apiVersion":"placement.kubernetes-fleet.io/v1beta1","kind":"ResourceEnvelope","metadata":{"name":"env","namespace":"app"},"data":{
			"job":{"apiVersion":"batch/v1","kind":"Job","metadata":{"generateName":"migrate-"}}}}`,
		want:   []string{`{"apiVersion":"batch/v1","kind":"Job","metadata":{"generateName":"migrate-","namespace":"app"}}`},
		wantID: placementv1beta1.EnvelopeIdentifier{Name: "env", Namespace: "app", Type: placementv1beta1.ResourceEnvelopeType},
	}, {
		name: "an entry without a kind",
		raw: `{"apiVersion":"placement.kubernetes-fleet.io/v1beta1","kind":"ResourceEnvelope","metadata":{"name":"env","namespace":"app"},"data":{
			"x":{"apiVersion":"v1","metadata":{"name":"r"}}}}`,
		wantErr: `entry "x": apiVersion, kind and metadata.name are required`,
	}, {
		name:    "an empty envelope",
		raw:     `{"apiVersion":"placement.kubernetes-fleet.io/v1beta1","kind":"ResourceEnvelope","metadata":{"name":"env","namespace":"app"}}`,
		wantErr: `ResourceEnvelope app/env carries no object`,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env, err := Open([]byte(tc.raw))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.want == nil {
				if env != nil {
					t.Fatalf("got an envelope %+v", env)
				}
				return
			}
			if env.ID != tc.wantID {
				t.Errorf("ID = %+v, want %+v", env.ID, tc.wantID)
			}
			if len(env.Objects) != len(tc.want) {
				t.Fatalf("objects = %s, want %s", env.Objects, tc.want)
			}
			for i := range tc.want {
				if string(env.Objects[i]) != tc.want[i] {
					t.Errorf("object %d = %s, want %s", i, env.Objects[i], tc.want[i])
				}
			}
		})
	}
}
