package v1beta1

import (
	"fmt"
	"strings"
)

// ResourceSnapshotName names the master snapshot of a placement's resources
// at index: the one that carries the index's labels and annotations.
func ResourceSnapshotName(placement string, index int) string {
	return fmt.Sprintf(ResourceSnapshotNameFmt, placement, index)
}

// ResourceSnapshotShardName names shard sub (1 and up) of the snapshot at
// index, for resources that do not fit in one object.
func ResourceSnapshotShardName(placement string, index, sub int) string {
	return fmt.Sprintf(ResourceSnapshotNameWithSubindexFmt, placement, index, sub)
}

// ResourceSnapshotIndexOf reads the index from the name of a placement's
// master snapshot, as status reports it ("3" of "web-3-snapshot").
func ResourceSnapshotIndexOf(placement, master string) string {
	return strings.TrimSuffix(strings.TrimPrefix(master, placement+"-"), "-snapshot")
}

// PolicySnapshotName names a placement's scheduling policy snapshot at index.
func PolicySnapshotName(placement string, index int) string {
	return fmt.Sprintf(PolicySnapshotNameFmt, placement, index)
}

// OverrideSnapshotName names an override's snapshot at index.
func OverrideSnapshotName(override string, index int) string {
	return fmt.Sprintf(OverrideSnapshotNameFmt, override, index)
}

// ApprovalRequestName names the approval request of an update run's stage
// task: <run>-before-<stage> or <run>-after-<stage>.
func ApprovalRequestName(run, taskType, stage string) string {
	if taskType == BeforeStageTaskLabelValue {
		return fmt.Sprintf(BeforeStageApprovalTaskNameFmt, run, stage)
	}
	return fmt.Sprintf(AfterStageApprovalTaskNameFmt, run, stage)
}
