package workhomes

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestHomeSecretRoundTrip(t *testing.T) {
	want := Home{Shard: "shard-1", Cluster: "2xk9", Token: "tok"}
	got, err := FromSecret(want.Secret("fleet-member-m1"))
	if err != nil || got != want {
		t.Fatalf("FromSecret(Secret()) = %+v, %v; want %+v", got, err, want)
	}
	noToken := Home{Shard: "shard-1", Cluster: "2xk9"}
	if _, ok := noToken.Secret("ns").Data[TokenKey]; ok {
		t.Errorf("a home without a token wrote the key %s", TokenKey)
	}
	if _, err := FromSecret(&corev1.Secret{}); err == nil {
		t.Errorf("a Secret naming no shard was read as a home")
	}
}
