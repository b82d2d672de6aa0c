package v1beta1

// Well-known keys, names, condition types and reasons. They are observable by
// users and by KubeFleet tooling (kubectl-fleet, dashboards), so the string
// values must stay exactly as they are.

const (
	// fleetPrefix prefixes all fleet-owned label, annotation and finalizer keys.
	fleetPrefix = "kubernetes-fleet.io/"

	// FleetPrefix is exported for code that needs to recognise fleet keys.
	FleetPrefix = fleetPrefix
)

// Labels.
const (
	// PlacementTrackingLabel points snapshots, bindings and Works at the
	// owning placement (CRP name, or RP name within its namespace). The odd
	// key is historical.
	PlacementTrackingLabel = fleetPrefix + "parent-CRP"

	// IsLatestSnapshotLabel is "true" on the newest policy, resource (master)
	// or override snapshot of a parent.
	IsLatestSnapshotLabel = fleetPrefix + "is-latest-snapshot"

	// ResourceIndexLabel carries the index of a resource snapshot group.
	ResourceIndexLabel = fleetPrefix + "resource-index"

	// PolicyIndexLabel carries the index of a scheduling policy snapshot.
	PolicyIndexLabel = fleetPrefix + "policy-index"

	// OverrideIndexLabel carries the index of an override snapshot.
	OverrideIndexLabel = fleetPrefix + "override-index"

	// OverrideTrackingLabel points an override snapshot at its override.
	OverrideTrackingLabel = fleetPrefix + "parent-resource-override"

	// ParentBindingLabel points a Work at the binding it was rendered for.
	ParentBindingLabel = fleetPrefix + "parent-resource-binding"

	// ParentNamespaceLabel records the namespace of an RP on its Works
	// (empty for CRPs).
	ParentNamespaceLabel = fleetPrefix + "parent-placement-namespace"

	// ParentResourceSnapshotIndexLabel records which resource snapshot index
	// a Work was rendered from.
	ParentResourceSnapshotIndexLabel = fleetPrefix + "parent-resource-snapshot-index"

	// EnvelopeTypeLabel, EnvelopeNameLabel and EnvelopeNamespaceLabel mark
	// Works that carry the contents of an envelope.
	EnvelopeTypeLabel      = fleetPrefix + "envelope-work"
	EnvelopeNameLabel      = fleetPrefix + "envelope-name"
	EnvelopeNamespaceLabel = fleetPrefix + "envelope-namespace"

	// FleetResourceLabelKey marks fleet-owned namespaces (fleet-member-*).
	FleetResourceLabelKey = fleetPrefix + "is-fleet-resource"

	// MemberClusterNameLabel is set on every MemberCluster to its own name.
	MemberClusterNameLabel = fleetPrefix + "member-name"

	// Labels on approval requests created by update runs.
	TargetUpdateRunLabel           = fleetPrefix + "targetUpdateRun"
	TargetUpdatingStageNameLabel   = fleetPrefix + "targetUpdatingStage"
	TaskTypeLabel                  = fleetPrefix + "taskType"
	IsLatestUpdateRunApprovalLabel = fleetPrefix + "isLatestUpdateRunApproval"

	// Values of TaskTypeLabel.
	BeforeStageTaskLabelValue = "beforeStage"
	AfterStageTaskLabelValue  = "afterStage"
)

// Annotations.
const (
	// Resource snapshot (master) annotations.
	NumberOfResourceSnapshotsAnnotation                  = fleetPrefix + "number-of-resource-snapshots"
	ResourceGroupHashAnnotation                          = fleetPrefix + "resource-hash"
	NumberOfEnvelopedObjectsAnnotation                   = fleetPrefix + "number-of-enveloped-object"
	NextResourceSnapshotCandidateDetectionTimeAnnotation = fleetPrefix + "next-resource-snapshot-candidate-detection-time"
	// SubindexOfResourceSnapshotAnnotation is set on shard snapshots.
	SubindexOfResourceSnapshotAnnotation = fleetPrefix + "subindex-of-resource-snapshot"

	// Policy snapshot annotations.
	NumberOfClustersAnnotation = fleetPrefix + "number-of-clusters"
	CRPGenerationAnnotation    = fleetPrefix + "CRP-generation"

	// Work annotations.
	ParentResourceSnapshotNameAnnotation                = fleetPrefix + "parent-resource-snapshot-name"
	ParentClusterResourceOverrideSnapshotHashAnnotation = fleetPrefix + "parent-cluster-resource-override-snapshot-hash"
	ParentResourceOverrideSnapshotHashAnnotation        = fleetPrefix + "parent-resource-override-snapshot-hash"

	// PreviousBindingStateAnnotation remembers a binding's state before the
	// last transition.
	PreviousBindingStateAnnotation = fleetPrefix + "previous-binding-state"

	// EnvelopeConfigMapAnnotation marks legacy ConfigMap envelopes (no
	// longer processed; kept so they can be recognised).
	EnvelopeConfigMapAnnotation = fleetPrefix + "envelope-configmap"

	// Annotations written on objects applied in member clusters.
	ManifestHashAnnotation      = fleetPrefix + "spec-hash"
	LastAppliedConfigAnnotation = fleetPrefix + "last-applied-configuration"
)

// Finalizers.
const (
	ClusterResourcePlacementCleanupFinalizer       = fleetPrefix + "crp-cleanup"
	ResourcePlacementCleanupFinalizer              = fleetPrefix + "rp-cleanup"
	SchedulerCleanupFinalizer                      = fleetPrefix + "scheduler-cleanup"
	SchedulerBindingCleanupFinalizer               = fleetPrefix + "scheduler-crb-cleanup"
	WorkFinalizer                                  = fleetPrefix + "work-cleanup"
	OverrideFinalizer                              = fleetPrefix + "override-cleanup"
	UpdateRunFinalizer                             = fleetPrefix + "stagedupdaterun-finalizer"
	ClusterResourcePlacementStatusCleanupFinalizer = fleetPrefix + "cluster-resource-placement-status-cleanup"
)

// Object naming.
const (
	// ResourceSnapshotNameFmt names the master snapshot: {placement}-{index}-snapshot.
	ResourceSnapshotNameFmt = "%s-%d-snapshot"
	// ResourceSnapshotNameWithSubindexFmt names shards: {placement}-{index}-{subindex}.
	ResourceSnapshotNameWithSubindexFmt = "%s-%d-%d"
	// PolicySnapshotNameFmt names policy snapshots: {placement}-{index}.
	PolicySnapshotNameFmt = "%s-%d"
	// OverrideSnapshotNameFmt names override snapshots: {override}-{index}.
	OverrideSnapshotNameFmt = "%s-%d"

	// FirstWorkNameFmt names the Work of the master snapshot: {prefix}-work.
	FirstWorkNameFmt = "%s-work"
	// WorkNameWithSubindexFmt names the Works of shards: {prefix}-{subindex}.
	WorkNameWithSubindexFmt = "%s-%d"
	// WorkNameWithEnvelopeFmt names envelope Works: {prefix}-envelope-{uuid}.
	WorkNameWithEnvelopeFmt = "%s-envelope-%s"
	// WorkNameWithConfigEnvelopeFmt is the legacy ConfigMap-envelope form.
	WorkNameWithConfigEnvelopeFmt = "%s-configmap-%s"
	// WorkNameBaseForRPFmt is the Work name prefix of an RP: {namespace}.{name}.
	WorkNameBaseForRPFmt = "%s.%s"

	// ApprovalTaskNameFmt names approval requests: {run}-{before|after}-{stage}.
	BeforeStageApprovalTaskNameFmt = "%s-before-%s"
	AfterStageApprovalTaskNameFmt  = "%s-after-%s"

	// UpdateRunDeleteStageName is the synthetic last stage of an update run
	// that removes resources from clusters no longer selected.
	UpdateRunDeleteStageName = fleetPrefix + "deleteStage"

	// WorkFieldManagerName is the field manager of server-side applies.
	WorkFieldManagerName = "work-api-agent"
)

// ClusterResourcePlacementConditionType is a top-level CRP condition type.
type ClusterResourcePlacementConditionType string

const (
	ClusterResourcePlacementScheduledConditionType        ClusterResourcePlacementConditionType = "ClusterResourcePlacementScheduled"
	ClusterResourcePlacementRolloutStartedConditionType   ClusterResourcePlacementConditionType = "ClusterResourcePlacementRolloutStarted"
	ClusterResourcePlacementOverriddenConditionType       ClusterResourcePlacementConditionType = "ClusterResourcePlacementOverridden"
	ClusterResourcePlacementWorkSynchronizedConditionType ClusterResourcePlacementConditionType = "ClusterResourcePlacementWorkSynchronized"
	ClusterResourcePlacementAppliedConditionType          ClusterResourcePlacementConditionType = "ClusterResourcePlacementApplied"
	ClusterResourcePlacementAvailableConditionType        ClusterResourcePlacementConditionType = "ClusterResourcePlacementAvailable"
	ClusterResourcePlacementDiffReportedConditionType     ClusterResourcePlacementConditionType = "ClusterResourcePlacementDiffReported"
	// ClusterResourcePlacementStatusSyncedConditionType reports the copy of
	// the status into a ClusterResourcePlacementStatus (NamespaceAccessible).
	ClusterResourcePlacementStatusSyncedConditionType ClusterResourcePlacementConditionType = "ClusterResourcePlacementStatusSynced"
)

// ResourcePlacementConditionType is a top-level RP condition type.
type ResourcePlacementConditionType string

const (
	ResourcePlacementScheduledConditionType        ResourcePlacementConditionType = "ResourcePlacementScheduled"
	ResourcePlacementRolloutStartedConditionType   ResourcePlacementConditionType = "ResourcePlacementRolloutStarted"
	ResourcePlacementOverriddenConditionType       ResourcePlacementConditionType = "ResourcePlacementOverridden"
	ResourcePlacementWorkSynchronizedConditionType ResourcePlacementConditionType = "ResourcePlacementWorkSynchronized"
	ResourcePlacementAppliedConditionType          ResourcePlacementConditionType = "ResourcePlacementApplied"
	ResourcePlacementAvailableConditionType        ResourcePlacementConditionType = "ResourcePlacementAvailable"
	ResourcePlacementDiffReportedConditionType     ResourcePlacementConditionType = "ResourcePlacementDiffReported"
)

// PerClusterPlacementConditionType is a condition type used in
// placementStatuses[].conditions and (except Scheduled) on bindings.
type PerClusterPlacementConditionType string

const (
	PerClusterScheduledConditionType        PerClusterPlacementConditionType = "Scheduled"
	PerClusterRolloutStartedConditionType   PerClusterPlacementConditionType = "RolloutStarted"
	PerClusterOverriddenConditionType       PerClusterPlacementConditionType = "Overridden"
	PerClusterWorkSynchronizedConditionType PerClusterPlacementConditionType = "WorkSynchronized"
	PerClusterAppliedConditionType          PerClusterPlacementConditionType = "Applied"
	PerClusterAvailableConditionType        PerClusterPlacementConditionType = "Available"
	PerClusterDiffReportedConditionType     PerClusterPlacementConditionType = "DiffReported"
)

// ResourceBindingConditionType is a binding condition type.
type ResourceBindingConditionType string

const (
	ResourceBindingRolloutStarted   ResourceBindingConditionType = "RolloutStarted"
	ResourceBindingOverridden       ResourceBindingConditionType = "Overridden"
	ResourceBindingWorkSynchronized ResourceBindingConditionType = "WorkSynchronized"
	ResourceBindingApplied          ResourceBindingConditionType = "Applied"
	ResourceBindingAvailable        ResourceBindingConditionType = "Available"
	ResourceBindingDiffReported     ResourceBindingConditionType = "DiffReported"
)

// Other condition types.
const (
	// PolicySnapshotScheduled is set by the scheduler on a policy snapshot.
	PolicySnapshotScheduled = "Scheduled"

	// Work conditions.
	WorkConditionTypeApplied       = "Applied"
	WorkConditionTypeAvailable     = "Available"
	WorkConditionTypeDiffReported  = "DiffReported"
	WorkConditionTypeStatusTrimmed = "StatusTrimmed"
	// WorkConditionTypeRemoved is set, False, on a deleted Work while the
	// member deletes what it placed; the Work goes once all of it is gone.
	WorkConditionTypeRemoved = "Removed"

	// Eviction conditions; both are terminal.
	PlacementEvictionConditionTypeValid    = "Valid"
	PlacementEvictionConditionTypeExecuted = "Executed"

	// Update run conditions.
	StagedUpdateRunConditionInitialized = "Initialized"
	StagedUpdateRunConditionProgressing = "Progressing"
	StagedUpdateRunConditionSucceeded   = "Succeeded"
	// Stage conditions.
	StageUpdatingConditionProgressing = "Progressing"
	StageUpdatingConditionSucceeded   = "Succeeded"
	// Cluster-in-stage conditions.
	ClusterUpdatingConditionStarted   = "Started"
	ClusterUpdatingConditionSucceeded = "Succeeded"
	// Stage task conditions.
	StageTaskConditionApprovalRequestCreated  = "ApprovalRequestCreated"
	StageTaskConditionApprovalRequestApproved = "ApprovalRequestApproved"
	StageTaskConditionWaitTimeElapsed         = "WaitTimeElapsed"
	// Approval request conditions: Approved is set by the user, Accepted by
	// the controller once it has acted on it.
	ApprovalRequestConditionApproved         = "Approved"
	ApprovalRequestConditionApprovalAccepted = "ApprovalAccepted"
)

// Placement-level condition reasons.
const (
	InvalidResourceSelectorsReason              = "InvalidResourceSelectors"
	SchedulePendingReason                       = "SchedulePending"
	ScheduleSucceededReason                     = "ScheduleSucceeded"
	ScheduleFailedReason                        = "ScheduleFailed"
	SchedulingPolicyFulfilledReason             = "SchedulingPolicyFulfilled"
	SchedulingPolicyUnfulfilledReason           = "SchedulingPolicyUnfulfilled"
	RolloutStartedUnknownReason                 = "RolloutStartedUnknown"
	RolloutControlledByExternalControllerReason = "RolloutControlledByExternalController"
	RolloutNotStartedYetReason                  = "RolloutNotStartedYet"
	RolloutStartedReason                        = "RolloutStarted"
	OverriddenPendingReason                     = "OverriddenPending"
	OverrideNotSpecifiedReason                  = "NoOverrideSpecified"
	OverriddenFailedReason                      = "OverriddenFailed"
	OverriddenSucceededReason                   = "OverriddenSucceeded"
	WorkSynchronizedUnknownReason               = "WorkSynchronizedUnknown"
	WorkNotSynchronizedYetReason                = "WorkNotSynchronizedYet"
	WorkSynchronizedReason                      = "WorkSynchronized"
	ApplyPendingReason                          = "ApplyPending"
	ApplyFailedReason                           = "ApplyFailed"
	ApplySucceededReason                        = "ApplySucceeded"
	AvailableUnknownReason                      = "ResourceAvailableUnknown"
	NotAvailableYetReason                       = "ResourceNotAvailableYet"
	AvailableReason                             = "ResourceAvailable"
	DiffReportedStatusUnknownReason             = "DiffReportingPending"
	DiffReportedStatusFalseReason               = "DiffReportingIncompleteOrFailed"
	DiffReportedStatusTrueReason                = "DiffReportingCompleted"
	StatusSyncFailedReason                      = "StatusSyncFailed"
	StatusSyncSucceededReason                   = "StatusSyncSucceeded"

	// Scheduler messages for the Scheduled condition.
	SchedulingPolicyFulfilledMessageFmt   = "found all cluster needed as specified by the scheduling policy, found %d cluster(s)"
	SchedulingPolicyUnfulfilledMessageFmt = "could not find all clusters needed as specified by the scheduling policy, found %d cluster(s) instead"
)

// Per-cluster / binding condition reasons.
const (
	ScheduledReason                    = "Scheduled"
	AllWorkSyncedReason                = "AllWorkSynced"
	SyncWorkFailedReason               = "SyncWorkFailed"
	ApplyInProgressReason              = "ApplyInProgress"
	DiffReportInProgressReason         = "DiffReportInProgress"
	WorkNotAppliedReason               = "NotAllWorkHaveBeenApplied"
	AllWorkAppliedReason               = "AllWorkHaveBeenApplied"
	WorkNotAvailableReason             = "NotAllWorkAreAvailable"
	WorkNotAvailabilityTrackableReason = "NotAllWorkAreAvailabilityTrackable"
	AllWorkAvailableReason             = "AllWorkAreAvailable"
	AllWorkDiffReportedReason          = "AllWorkHaveDiffReported"
	WorkNotDiffReportedReason          = "NotAllWorkHaveDiffReported"
)

// Work-level condition reasons.
const (
	WorkAppliedFailedReason                     = "WorkAppliedFailed"
	WorkAppliedCompletedReason                  = "WorkAppliedCompleted"
	WorkNotAvailableYetReason                   = "WorkNotAvailableYet"
	WorkAvailabilityUnknownReason               = "WorkAvailabilityUnknown"
	WorkAvailableReason                         = "WorkAvailable"
	WorkNotTrackableReason                      = "WorkNotTrackable"
	WorkAllManifestsAppliedReason               = "AllManifestsApplied"
	WorkAllManifestsAvailableReason             = "AllManifestsAvailable"
	WorkAllManifestsDiffReportedReason          = "AllManifestsDiffReported"
	WorkNotAllManifestsAppliedReason            = "SomeManifestsAreNotApplied"
	WorkNotAllManifestsAvailableReason          = "SomeManifestsAreNotAvailable"
	WorkNotAllManifestsDiffReportedReason       = "SomeManifestsHaveNotReportedDiff"
	WorkNotAllManifestsTrackableReason          = "SomeManifestsAreNotAvailabilityTrackable"
	WorkStatusTrimmedDueToOversizedStatusReason = "Oversized"
	// WorkRemovalPendingReason: the member still holds objects the deleted
	// Work placed (finalizers, or dependents being collected).
	WorkRemovalPendingReason = "RemovalPending"
)

// Manifest-level results (reasons of manifestConditions[].conditions).
const (
	// Apply results.
	ApplyResultDecodingErred                   = "DecodingErred"
	ApplyResultFoundGenerateName               = "FoundGenerateName"
	ApplyResultDuplicated                      = "Duplicated"
	ApplyResultFailedToFindObjInMemberCluster  = "FailedToFindObjInMemberCluster"
	ApplyResultFailedToTakeOver                = "FailedToTakeOver"
	ApplyResultNotTakenOver                    = "NotTakenOver"
	ApplyResultFailedToRunDriftDetection       = "FailedToRunDriftDetection"
	ApplyResultFoundDrifts                     = "FoundDrifts"
	ApplyResultFoundDriftsInDegradedMode       = "FoundDriftsInDegradedMode"
	ApplyResultFailedToApply                   = "ManifestApplyFailed"
	ApplyResultApplied                         = "Applied"
	ApplyResultAppliedWithFailedDriftDetection = "AppliedWithFailedDriftDetection"
	ApplyResultApplyConflictBetweenPlacements  = "ApplyConflictBetweenPlacements"
	ApplyResultManifestsAlreadyOwnedByOthers   = "ManifestsAlreadyOwnedByOthers"
	ApplyResultManifestAlreadyUpToDate         = "ManifestAlreadyUpToDate"
	ApplyResultManifestNeedsUpdate             = "ManifestNeedsUpdate"
	ApplyResultPreparingToProcess              = "PreparingToProcess"

	// Diff reporting results.
	DiffResultFailedToReportDiff      = "FailedToReportDiff"
	DiffResultFoundDiff               = "FoundDiff"
	DiffResultFoundDiffInDegradedMode = "FoundDiffInDegradedMode"
	DiffResultNoDiffFound             = "NoDiffFound"

	// Availability results.
	AvailabilityResultSkipped         = "Skipped"
	AvailabilityResultFailed          = "Failed"
	AvailabilityResultAvailable       = "Available"
	AvailabilityResultNotYetAvailable = "ManifestNotAvailableYet"
	AvailabilityResultNotTrackable    = "NotTrackable"
)

// Update run reasons.
const (
	UpdateRunInitializeSucceededReason   = "UpdateRunInitializedSuccessfully"
	UpdateRunInitializeFailedReason      = "UpdateRunInitializedFailed"
	UpdateRunStartedReason               = "UpdateRunStarted"
	UpdateRunNotStartedReason            = "UpdateRunNotStarted"
	UpdateRunFailedReason                = "UpdateRunFailed"
	UpdateRunStuckReason                 = "UpdateRunStuck"
	UpdateRunWaitingReason               = "UpdateRunWaiting"
	UpdateRunStoppingReason              = "UpdateRunStopping"
	UpdateRunStoppedReason               = "UpdateRunStopped"
	UpdateRunSucceededReason             = "UpdateRunSucceeded"
	StageUpdatingStartedReason           = "StageUpdatingStarted"
	StageUpdatingWaitingReason           = "StageUpdatingWaiting"
	StageUpdatingStoppingReason          = "StageUpdatingStopping"
	StageUpdatingStoppedReason           = "StageUpdatingStopped"
	StageUpdatingFailedReason            = "StageUpdatingFailed"
	StageUpdatingSucceededReason         = "StageUpdatingSucceeded"
	StageUpdatingSkippedNoClustersReason = "StageUpdatingSkippedNoClusters"
	ClusterUpdatingStartedReason         = "ClusterUpdatingStarted"
	ClusterUpdatingFailedReason          = "ClusterUpdatingFailed"
	ClusterUpdatingSucceededReason       = "ClusterUpdatingSucceeded"
	// Approval task reasons, by when the task runs.
	BeforeStageTaskApprovalRequestCreatedReason  = "BeforeStageTaskApprovalRequestCreated"
	BeforeStageTaskApprovalRequestApprovedReason = "BeforeStageTaskApprovalRequestApproved"
	AfterStageTaskApprovalRequestCreatedReason   = "AfterStageTaskApprovalRequestCreated"
	AfterStageTaskApprovalRequestApprovedReason  = "AfterStageTaskApprovalRequestApproved"
	AfterStageTaskWaitTimeElapsedReason          = "AfterStageTaskWaitTimeElapsed"
	ApprovalRequestApprovalAcceptedReason        = "ApprovalRequestApprovalAccepted"
)

// Eviction reasons and messages.
const (
	ClusterResourcePlacementEvictionValidReason       = "ClusterResourcePlacementEvictionValid"
	ClusterResourcePlacementEvictionInvalidReason     = "ClusterResourcePlacementEvictionInvalid"
	ClusterResourcePlacementEvictionExecutedReason    = "ClusterResourcePlacementEvictionExecuted"
	ClusterResourcePlacementEvictionNotExecutedReason = "ClusterResourcePlacementEvictionNotExecuted"

	EvictionAllowedNoPDBMessage    = "Eviction is allowed, no ClusterResourcePlacementDisruptionBudget specified"
	EvictionBlockedByPDBMessageFmt = "Eviction is blocked by specified ClusterResourcePlacementDisruptionBudget, availablePlacements: %d, totalPlacements: %d"
)
