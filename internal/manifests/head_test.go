package manifests

import (
	"strings"
	"testing"
)

func TestReadHead(t *testing.T) {
	tests := []struct {
		raw  string
		want Head
		err  string // "" means read
	}{
		{raw: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"app"},"data":{"Kind":"x","kind":"y"}}`,
			want: Head{APIVersion: "v1", Kind: "ConfigMap", Name: "c", Namespace: "app"}},
		{raw: `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"app"}}`, want: Head{APIVersion: "v1", Kind: "Namespace", Name: "app"}},
		{raw: `{"apiVersion":"v1","kind":"Namespace"}`, want: Head{APIVersion: "v1", Kind: "Namespace"}},
		{raw: `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","Kind":"ConfigMap","metadata":{"name":"x"}}`,
			err: `has the key "Kind", a variant of "kind"`},
		{raw: `{"apiVersion":"v1","ApiVersion":"apps/v1","kind":"ConfigMap","metadata":{"name":"x"}}`, err: `a variant of "apiVersion"`},
		{raw: `{"apiVersion":"v1","kind":"ConfigMap","kind":"Secret","metadata":{"name":"x"}}`, err: `repeats a key`},
		{raw: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"},"Metadata":{"name":"y"}}`, err: `a variant of "metadata"`},
		{raw: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","Namespace":"kube-system"}}`, err: `metadata has the key "Namespace"`},
		{raw: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","name":"y"}}`, err: `metadata repeats a key`},
		{raw: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","LABELS":{}}}`, err: `a variant of "labels"`},
		{raw: `{"apiVersion":"v1","kind":7}`, err: `kind is not a string`},
		{raw: `[1]`, err: `not a JSON object`},
		{raw: `{"apiVersion":"v1","kind":"ConfigMap","metadata":"x"}`, err: `metadata is not a JSON object`},
	}
	for _, tc := range tests {
		got, err := ReadHead([]byte(tc.raw))
		switch {
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("ReadHead(%s) = %+v, %v; want %+v", tc.raw, got, err, tc.want)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("ReadHead(%s) = %v, want an error with %q", tc.raw, err, tc.err)
		}
	}
}
