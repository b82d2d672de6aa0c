package workapplier

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
)

func TestMemberWarningsKeepTheLatestPerReasonUntilTheyAreOld(t *testing.T) {
	var w memberWarnings
	web := objectKey{group: "apps", kind: "Deployment", namespace: "web", name: "web"}
	t0 := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	pull := placementv1beta1.MemberWarning{Reason: "Failed", Message: `Failed to pull image "nginx:nope"`, Object: "Pod web-1"}
	if !w.record(web, pull, t0) {
		t.Fatal("a first warning changes nothing")
	}
	again := pull
	again.Object = "Pod web-2"
	if w.record(web, again, t0.Add(time.Minute)) {
		t.Error("the same warning from another pod changes what the object reports")
	}
	if w.record(web, pull, t0) {
		t.Error("an older repeat changes what the object reports")
	}
	backoff := placementv1beta1.MemberWarning{Reason: "BackOff", Message: "Back-off pulling image", Object: "Pod web-1"}
	w.record(web, backoff, t0.Add(2*time.Minute))
	if diff := cmp.Diff([]placementv1beta1.MemberWarning{backoff, pull}, w.of(web)); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
	if w.expire(web, t0.Add(warningTTL)) {
		t.Error("a warning repeated within warningTTL expired")
	}
	if !w.expire(web, t0.Add(time.Minute+warningTTL+time.Second)) {
		t.Error("a warning not repeated for warningTTL did not expire")
	}
	if diff := cmp.Diff([]placementv1beta1.MemberWarning{backoff}, w.of(web)); diff != "" {
		t.Errorf("warnings after expiry (-want +got):\n%s", diff)
	}
	for i, reason := range []string{"A", "B", "C", "D"} {
		w.record(web, placementv1beta1.MemberWarning{Reason: reason}, t0.Add(time.Duration(i)*time.Second))
	}
	if n := len(w.of(web)); n != maxWarnings {
		t.Errorf("an object reports %d warnings, want %d", n, maxWarnings)
	}
}
