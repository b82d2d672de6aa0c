package updaterun

import (
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
)

// kinds builds the objects of one scope: ClusterStagedUpdateRuns with
// cluster-scoped strategies and approval requests for ClusterResourcePlacements,
// or their namespaced twins for ResourcePlacements.
type kinds struct{ namespaced bool }

func (k kinds) newRun() placementv1beta1.UpdateRunObj {
	if k.namespaced {
		return &placementv1beta1.StagedUpdateRun{}
	}
	return &placementv1beta1.ClusterStagedUpdateRun{}
}

// runs lists the runs of a workspace (in namespace, for namespaced runs).
func (k kinds) newRunList() client.ObjectList {
	if k.namespaced {
		return &placementv1beta1.StagedUpdateRunList{}
	}
	return &placementv1beta1.ClusterStagedUpdateRunList{}
}

func (k kinds) runsOf(list client.ObjectList) []placementv1beta1.UpdateRunObj {
	var out []placementv1beta1.UpdateRunObj
	switch l := list.(type) {
	case *placementv1beta1.StagedUpdateRunList:
		for i := range l.Items {
			out = append(out, &l.Items[i])
		}
	case *placementv1beta1.ClusterStagedUpdateRunList:
		for i := range l.Items {
			out = append(out, &l.Items[i])
		}
	}
	return out
}

func (k kinds) newStrategy() placementv1beta1.UpdateStrategyObj {
	if k.namespaced {
		return &placementv1beta1.StagedUpdateStrategy{}
	}
	return &placementv1beta1.ClusterStagedUpdateStrategy{}
}

func (k kinds) newApprovalRequest() placementv1beta1.ApprovalRequestObj {
	if k.namespaced {
		return &placementv1beta1.ApprovalRequest{}
	}
	return &placementv1beta1.ClusterApprovalRequest{}
}

func (k kinds) newApprovalRequestList() client.ObjectList {
	if k.namespaced {
		return &placementv1beta1.ApprovalRequestList{}
	}
	return &placementv1beta1.ClusterApprovalRequestList{}
}

// runKind names the run kind in messages.
func (k kinds) runKind() string {
	if k.namespaced {
		return "StagedUpdateRun"
	}
	return "ClusterStagedUpdateRun"
}

func (k kinds) strategyKind() string {
	if k.namespaced {
		return "StagedUpdateStrategy"
	}
	return "ClusterStagedUpdateStrategy"
}

func (k kinds) placementKind() string {
	if k.namespaced {
		return placementv1beta1.ResourcePlacementKind
	}
	return placementv1beta1.ClusterResourcePlacementKind
}
