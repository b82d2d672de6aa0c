package teamadmission

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/kcp-dev/logicalcluster/v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authentication/user"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	"github.com/fleetplane/fleetplane/workspaces/tenancy"
	"github.com/fleetplane/fleetplane/workspaces/usage"
)

type rules map[logicalcluster.Name]error

func (r rules) MayCreateChildWorkspace(_ context.Context, cluster logicalcluster.Name) error {
	return r[cluster]
}

func (r rules) TeamOf(context.Context, logicalcluster.Name) (*tenancy.Team, error) { return nil, nil }

// limited is a team near its limits.
type limited struct{ rules }

func (limited) TeamOf(_ context.Context, cluster logicalcluster.Name) (*tenancy.Team, error) {
	if cluster != "team" {
		return nil, nil
	}
	return &tenancy.Team{
		Path:   logicalcluster.NewPath("root:teams:a"),
		Limits: tenancy.Limits{Objects: 10, Bytes: 1000, Placements: 1, Overrides: 5, SnapshotsKept: 5},
		Used:   usage.Usage{Objects: 9, Bytes: 900, Placements: 1},
		Grants: []string{"team-a"},
	}, nil
}

func TestLimits(t *testing.T) {
	team := &user.DefaultInfo{Name: "system:serviceaccount:default:team-admin", Groups: []string{"system:authenticated"}}
	masters := &user.DefaultInfo{Name: "hub", Groups: []string{"system:masters"}}
	in := func(cluster string) context.Context {
		return genericapirequest.WithCluster(context.Background(), genericapirequest.Cluster{Name: logicalcluster.Name(cluster)})
	}
	configMaps := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	crps := schema.GroupVersionResource{Group: usage.PlacementGroup, Version: "v1beta1", Resource: "clusterresourceplacements"}
	object := func(kind, data string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]interface{}{"apiVersion": "v1", "kind": kind, "data": map[string]interface{}{"k": data}}}
	}
	placement := func(limit int64) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]interface{}{"kind": "ClusterResourcePlacement", "spec": map[string]interface{}{"revisionHistoryLimit": limit}}}
	}
	annotated := func(usage string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetAnnotations(map[string]string{"tenancy.fleetplane.io/usage": usage})
		return u
	}
	write := func(op admission.Operation, gvr schema.GroupVersionResource, obj, old runtime.Object, u user.Info) admission.Attributes {
		kind := schema.GroupVersionKind{Kind: "ClusterResourcePlacement"}
		return admission.NewAttributesRecord(obj, old, kind, "", "x", gvr, "", op, nil, false, u)
	}
	p := New()
	p.SetRules(limited{})
	tests := []struct {
		name    string
		ctx     context.Context
		attrs   admission.Attributes
		refused string
	}{
		{"a small object", in("team"), write(admission.Create, configMaps, object("ConfigMap", "x"), nil, team), ""},
		{"an object too large", in("team"), write(admission.Create, configMaps, object("ConfigMap", strings.Repeat("x", 100)), nil, team),
			"team root:teams:a would go over its limit of 1k of storage on the hub (it has 900, this adds 154): delete what it no longer needs, or ask a platform admin to raise spec.limits.storage of ClusterGrant team-a in root:fleet"},
		{"an object grown too much", in("team"), write(admission.Update, configMaps, object("ConfigMap", strings.Repeat("x", 150)), object("ConfigMap", "x"), team), "spec.limits.storage"},
		{"an object shrunk", in("team"), write(admission.Update, configMaps, object("ConfigMap", "x"), object("ConfigMap", strings.Repeat("x", 500)), team), ""},
		{"a placement over the limit of placements", in("team"), write(admission.Create, crps, placement(5), nil, team), "its limit of 1 placements"},
		{"a placement keeping too many snapshots", in("team"), write(admission.Update, crps, placement(6), placement(6), team),
			"ClusterResourcePlacement x: spec.revisionHistoryLimit 6 is over team root:teams:a's limit of 5 snapshots kept per placement"},
		{"the hub's own write", in("team"), write(admission.Create, configMaps, object("ConfigMap", strings.Repeat("x", 1000)), nil, masters), ""},
		{"the root shard setting up a workspace on another shard", in("team"), write(admission.Create, logicalClusters.WithVersion("v1alpha1"), object("LogicalCluster", strings.Repeat("x", 1000)), nil,
			&user.DefaultInfo{Name: "fleet-external-logical-cluster-admin", Groups: []string{"system:kcp:external-logical-cluster-admin"}}), ""},
		{"the team writing the usage the hub shows", in("team"), write(admission.Update, logicalClusters.WithVersion("v1alpha1"), annotated(`{"used":{}}`), annotated(`{"used":{"objects":9}}`), team),
			"annotation tenancy.fleetplane.io/usage shows the team's use of the hub and is written by the hub alone"},
		{"the team writing another annotation of its workspace", in("fleet"), write(admission.Update, logicalClusters.WithVersion("v1alpha1"), annotated(`{}`), annotated(`{}`), team), ""},
		{"outside the teams", in("fleet"), write(admission.Create, configMaps, object("ConfigMap", strings.Repeat("x", 1000)), nil, team), ""},
	}
	for _, tc := range tests {
		err := p.Validate(tc.ctx, tc.attrs, nil)
		if (err != nil) != (tc.refused != "") || (err != nil && !strings.Contains(err.Error(), tc.refused)) {
			t.Errorf("%s: %v, want refused with %q", tc.name, err, tc.refused)
		}
	}
}

func TestValidate(t *testing.T) {
	team := &user.DefaultInfo{Name: "system:serviceaccount:default:team-admin", Groups: []string{"system:authenticated"}}
	masters := &user.DefaultInfo{Name: "hub", Groups: []string{"system:masters"}}
	attrs := func(resource schema.GroupResource, u user.Info) admission.Attributes {
		return admission.NewAttributesRecord(nil, nil, schema.GroupVersionKind{}, "", "sub", resource.WithVersion("v1alpha1"), "", admission.Create, nil, false, u)
	}
	in := func(cluster string) context.Context {
		return genericapirequest.WithCluster(context.Background(), genericapirequest.Cluster{Name: logicalcluster.Name(cluster)})
	}
	refused := errors.New("no grant lets it")
	p := New()
	if err := p.Validate(in("team"), attrs(workspaces, team), nil); err == nil || !strings.Contains(err.Error(), "still starting") {
		t.Errorf("before its rules: %v", err)
	}
	p.SetRules(rules{"team": refused})
	tests := []struct {
		name    string
		ctx     context.Context
		attrs   admission.Attributes
		refused bool
	}{
		{"a workspace in a team workspace", in("team"), attrs(workspaces, team), true},
		{"a workspace where the rules allow it", in("teams"), attrs(workspaces, team), false},
		{"a workspace in root", in("root"), attrs(workspaces, team), false},
		{"the hub's own write", in("team"), attrs(workspaces, masters), false},
		{"another resource", in("team"), attrs(schema.GroupResource{Resource: "configmaps"}, team), false},
	}
	for _, tc := range tests {
		err := p.Validate(tc.ctx, tc.attrs, nil)
		if (err != nil) != tc.refused || (err != nil && !strings.Contains(err.Error(), refused.Error())) {
			t.Errorf("%s: %v, want refused=%v", tc.name, err, tc.refused)
		}
	}
}
