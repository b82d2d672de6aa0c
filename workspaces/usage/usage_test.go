package usage

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kcp-dev/logicalcluster/v3"
	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/storage/etcd3/testserver"
)

const identityHash = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func TestParseKey(t *testing.T) {
	for _, tc := range []struct {
		key      string
		cluster  string
		resource schema.GroupResource
		ok       bool
	}{
		{key: "core/configmaps/2x7abc/default/app", cluster: "2x7abc", resource: schema.GroupResource{Resource: "configmaps"}, ok: true},
		{key: "core/namespaces/2x7abc/app", cluster: "2x7abc", resource: schema.GroupResource{Resource: "namespaces"}, ok: true},
		{key: "rbac.authorization.k8s.io/roles/2x7abc/app/r", cluster: "2x7abc", resource: schema.GroupResource{Group: "rbac.authorization.k8s.io", Resource: "roles"}, ok: true},
		{key: "tenancy.kcp.io/workspaces/customresources/root/team-a", cluster: "root", resource: schema.GroupResource{Group: "tenancy.kcp.io", Resource: "workspaces"}, ok: true},
		{key: "placement.kubernetes-fleet.io/clusterresourceplacements/" + identityHash + "/2x7abc/app", cluster: "2x7abc",
			resource: schema.GroupResource{Group: "placement.kubernetes-fleet.io", Resource: "clusterresourceplacements"}, ok: true},
		// Groups without a dot: a Deployment bound from the workload APIs.
		{key: "apps/deployments/" + identityHash + "/2x7abc/web/app", cluster: "2x7abc", resource: schema.GroupResource{Group: "apps", Resource: "deployments"}, ok: true},
		{key: "batch/jobs/2x7abc/web/once", cluster: "2x7abc", resource: schema.GroupResource{Group: "batch", Resource: "jobs"}, ok: true},
		{key: "core/services/" + identityHash + "/2x7abc/app/web", cluster: "2x7abc", resource: schema.GroupResource{Resource: "services"}, ok: true},
		// A team's own CRD whose resource is named like another cluster
		// still counts against the team's cluster.
		{key: "example.com/other/customresources/2x7abc/x", cluster: "2x7abc", resource: schema.GroupResource{Group: "example.com", Resource: "other"}, ok: true},
		// A namespace named like an identity comes after the cluster.
		{key: "core/configmaps/2x7abc/" + identityHash + "/app", cluster: "2x7abc", resource: schema.GroupResource{Resource: "configmaps"}, ok: true},
		{key: "core/configmaps", ok: false},
		{key: "core/configmaps/2x7abc", ok: false},
	} {
		got, ok := parseKey(tc.key)
		if ok != tc.ok || got.cluster != logicalcluster.Name(tc.cluster) || got.resource != tc.resource {
			t.Errorf("parseKey(%q) = %+v, %t; want %s %s, %t", tc.key, got, ok, tc.cluster, tc.resource, tc.ok)
		}
	}
}

// The meter counts what etcd holds when it starts and follows creates,
// updates and deletes from there, per cluster.
func TestMeter(t *testing.T) {
	client := testserver.RunEtcd(t, testserver.NewTestConfig(t)).Client
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	put := func(key, value string) {
		t.Helper()
		if _, err := client.Put(ctx, "/registry/"+key, value); err != nil {
			t.Fatal(err)
		}
	}
	crp := "placement.kubernetes-fleet.io/clusterresourceplacements/" + identityHash + "/team-a/"
	put("core/configmaps/team-a/default/one", strings.Repeat("x", 100))
	put(crp+"app", strings.Repeat("x", 50))
	put("core/configmaps/team-b/default/one", "x")
	put("unparsable", "x")
	put("placement.kubernetes-fleet.io/clusterresourcebindings/"+identityHash+"/team-a/app-member-1", strings.Repeat("x", 1000))

	m := NewMeter()
	go m.Run(ctx, client, "/registry")
	expect := func(cluster string, want Usage) {
		t.Helper()
		var got Usage
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			var synced bool
			if got, synced = m.Of(logicalcluster.Name(cluster)); synced && got == want {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Fatalf("%s: %+v, want %+v", cluster, got, want)
	}
	expect("team-a", Usage{Objects: 2, Bytes: 150, Placements: 1})
	expect("team-b", Usage{Objects: 1, Bytes: 1})

	put(crp+"web", strings.Repeat("x", 10))
	put("core/configmaps/team-a/default/one", strings.Repeat("x", 30))
	expect("team-a", Usage{Objects: 3, Bytes: 90, Placements: 2})
	if _, err := client.Delete(ctx, "/registry/"+crp, clientv3.WithPrefix()); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Delete(ctx, "/registry/core/configmaps/team-b/default/one"); err != nil {
		t.Fatal(err)
	}
	expect("team-a", Usage{Objects: 1, Bytes: 30})
	expect("team-b", Usage{})

	sum, _ := m.Sum(func(c logicalcluster.Name) bool { return strings.HasPrefix(c.String(), "team-") })
	if sum != (Usage{Objects: 1, Bytes: 30}) {
		t.Errorf("sum: %+v", sum)
	}
}
