package framework

import "strings"

// ClusterScore is a cluster's score in a PickN cycle. Clusters rank by
// topology spread score, then affinity score, then obsolete placement
// affinity; each plugin fills in the parts it owns.
type ClusterScore struct {
	TopologySpreadScore int32
	AffinityScore       int32
	// ObsoletePlacementAffinityScore favours clusters that already run the
	// placement under an older policy, to avoid needless moves.
	ObsoletePlacementAffinityScore int32
}

// Add adds o to s.
func (s *ClusterScore) Add(o ClusterScore) {
	s.TopologySpreadScore += o.TopologySpreadScore
	s.AffinityScore += o.AffinityScore
	s.ObsoletePlacementAffinityScore += o.ObsoletePlacementAffinityScore
}

// Compare returns -1, 0 or 1 as s ranks below, equal to or above o.
func (s ClusterScore) Compare(o ClusterScore) int {
	switch {
	case s.TopologySpreadScore != o.TopologySpreadScore:
		return sign(s.TopologySpreadScore - o.TopologySpreadScore)
	case s.AffinityScore != o.AffinityScore:
		return sign(s.AffinityScore - o.AffinityScore)
	default:
		return sign(s.ObsoletePlacementAffinityScore - o.ObsoletePlacementAffinityScore)
	}
}

func sign(v int32) int {
	switch {
	case v < 0:
		return -1
	case v > 0:
		return 1
	}
	return 0
}

// compareRank orders clusters for picking: by score and, as KubeFleet
// documents, the lexicographically larger name ranks higher on a tie.
func compareRank(a ClusterScore, aName string, b ClusterScore, bName string) int {
	if c := a.Compare(b); c != 0 {
		return c
	}
	return strings.Compare(aName, bName)
}
