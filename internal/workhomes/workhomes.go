// Package workhomes names a shard's home of Work. On a hub of several
// shards, each further shard keeps the Works of the team workspaces it
// holds in a workspace of its own, root:fleet:works-<shard>, so that its
// rollouts never wait on the root shard. The shard tells each member's
// syncer where that workspace is, and gives it a token of its identity
// there, with a Secret in the member's namespace of root:fleet.
package workhomes

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
)

// Label marks a home's Secret; its value is the shard's name.
const Label = "fleetplane.io/work-home"

// Keys of a home's Secret.
const (
	// ClusterKey is the logical cluster of the shard's works workspace.
	ClusterKey = "cluster"
	// TokenKey is a token of the member's service account identity in it;
	// absent for an identity that is not a service account, which then
	// authenticates there as it does in root:fleet.
	TokenKey = "token"
)

// Selector selects the homes' Secrets.
func Selector() labels.Selector {
	exists, _ := labels.NewRequirement(Label, selection.Exists, nil) // Label is a valid key
	return labels.NewSelector().Add(*exists)
}

// WorkspaceName is the name, in root:fleet, of a shard's works workspace.
func WorkspaceName(shard string) string { return "works-" + shard }

// SecretName is the name of a shard's home Secret in a member's namespace.
func SecretName(shard string) string { return "fleet-work-home-" + shard }

// Home is where one shard keeps a member's Work.
type Home struct {
	Shard   string
	Cluster string
	Token   string
}

// FromSecret reads a home's Secret.
func FromSecret(s *corev1.Secret) (Home, error) {
	h := Home{Shard: s.Labels[Label], Cluster: string(s.Data[ClusterKey]), Token: string(s.Data[TokenKey])}
	if h.Shard == "" || h.Cluster == "" {
		return Home{}, fmt.Errorf("Secret %s/%s names no shard (label %s) or no workspace (key %s)", s.Namespace, s.Name, Label, ClusterKey)
	}
	return h, nil
}

// Secret is the home's Secret in a member's namespace.
func (h Home) Secret(namespace string) *corev1.Secret {
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: SecretName(h.Shard), Labels: map[string]string{Label: h.Shard}},
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{ClusterKey: []byte(h.Cluster)},
	}
	if h.Token != "" {
		s.Data[TokenKey] = []byte(h.Token)
	}
	return s
}
