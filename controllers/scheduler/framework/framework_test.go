package framework_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/controllers/scheduler/framework"
)

// fakePlugin lets a test script a plugin's answers.
type fakePlugin struct {
	batch  int
	filter func(*clusterv1beta1.MemberCluster) *framework.Status
}

func (fakePlugin) Name() string { return "Fake" }

func (p fakePlugin) PostBatch(context.Context, *framework.CycleState, *placementv1beta1.PlacementPolicy) (int, *framework.Status) {
	return p.batch, nil
}

func (p fakePlugin) Filter(_ context.Context, _ *framework.CycleState, _ *placementv1beta1.PlacementPolicy, mc *clusterv1beta1.MemberCluster) *framework.Status {
	return p.filter(mc)
}

func TestPostBatchSizesTheBatches(t *testing.T) {
	pass := func(*clusterv1beta1.MemberCluster) *framework.Status { return nil }
	for _, tt := range []struct {
		batch int
		want  []string
	}{
		{batch: 0, want: nil},                // 0 stops picking
		{batch: 1, want: []string{"b", "c"}}, // the loop keeps picking one at a time
		{batch: 5, want: []string{"b", "c"}},
	} {
		p := fakePlugin{batch: tt.batch, filter: pass}
		fw := framework.New(framework.NewProfile("test").WithPlugins(p))
		res, err := fw.Schedule(context.Background(), newInput(pickN(2), newCluster("a"), newCluster("b"), newCluster("c")))
		if err != nil {
			t.Fatal(err)
		}
		equal(t, "created", created(res), tt.want)
	}
}

func TestInternalErrorsAbortTheCycle(t *testing.T) {
	boom := fakePlugin{filter: func(*clusterv1beta1.MemberCluster) *framework.Status { return framework.FromError(errors.New("boom")) }}
	fw := framework.New(framework.NewProfile("test").WithPlugins(boom))
	_, err := fw.Schedule(context.Background(), newInput(nil, newCluster("a")))
	if err == nil || !strings.Contains(err.Error(), "Filter plugin Fake: boom") {
		t.Errorf("err = %v", err)
	}
}

func TestInvalidInput(t *testing.T) {
	fw := framework.New(framework.NewProfile("empty"))
	for name, in := range map[string]framework.Input{
		"no grant function": {Policy: pickAll()},
		"unknown type":      {Policy: &placementv1beta1.PlacementPolicy{PlacementType: "PickSome"}, Granted: grantAll},
		"negative count":    {Policy: pickN(1), NumberOfClusters: -1, Granted: grantAll},
	} {
		if _, err := fw.Schedule(context.Background(), in); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestStatus(t *testing.T) {
	var nilStatus *framework.Status
	if !nilStatus.IsSuccess() || nilStatus.String() != "Success" {
		t.Errorf("nil status = %s", nilStatus)
	}
	st := framework.Unschedulable("x", "y")
	if !st.IsClusterUnschedulable() || st.Message() != "x; y" || st.String() != "ClusterUnschedulable: x; y" {
		t.Errorf("status = %s", st)
	}
	if err := errors.New("e"); framework.FromError(err).Err() != err || !framework.FromError(err).IsInternalError() {
		t.Errorf("FromError lost the error")
	}
}

func TestCycleState(t *testing.T) {
	bound := newCluster("bound")
	s := framework.NewCycleState(framework.CycleInfo{
		Placement: "p", Namespace: "ns", Now: now, Granted: func(mc *clusterv1beta1.MemberCluster) bool { return mc == bound },
		ScheduledOrBound: []*clusterv1beta1.MemberCluster{bound}, Obsolete: []string{"old"},
	})
	if s.Placement() != "p" || s.Namespace() != "ns" || !s.Now().Equal(now) || !s.IsGranted(bound) || s.IsGranted(newCluster("x")) {
		t.Errorf("cycle facts are wrong")
	}
	if !s.HasScheduledOrBoundBindingFor("bound") || s.HasScheduledOrBoundBindingFor("old") ||
		!s.HasObsoleteBindingFor("old") || s.HasObsoleteBindingFor("bound") || len(s.ScheduledOrBoundClusters()) != 1 {
		t.Errorf("binding facts are wrong")
	}
	if _, ok := s.Read("k"); ok {
		t.Errorf("Read of a missing key succeeded")
	}
	s.Write("k", 1)
	s.Write("other", 2)
	s.Write("k", 3)
	if v, ok := s.Read("k"); !ok || v != 3 {
		t.Errorf("Read = %v, %v; want the last value written", v, ok)
	}
}
