package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// UpdateRunObj is implemented by ClusterStagedUpdateRun and StagedUpdateRun.
// +kubebuilder:object:generate=false
type UpdateRunObj interface {
	metav1.Object
	runtime.Object
	GetUpdateRunSpec() *UpdateRunSpec
	SetUpdateRunSpec(UpdateRunSpec)
	GetUpdateRunStatus() *UpdateRunStatus
	SetUpdateRunStatus(UpdateRunStatus)
}

// UpdateStrategyObj is implemented by ClusterStagedUpdateStrategy and
// StagedUpdateStrategy.
// +kubebuilder:object:generate=false
type UpdateStrategyObj interface {
	metav1.Object
	runtime.Object
	GetUpdateStrategySpec() *UpdateStrategySpec
	SetUpdateStrategySpec(UpdateStrategySpec)
}

// ApprovalRequestObj is implemented by ClusterApprovalRequest and
// ApprovalRequest.
// +kubebuilder:object:generate=false
type ApprovalRequestObj interface {
	metav1.Object
	runtime.Object
	GetApprovalRequestSpec() *ApprovalRequestSpec
	SetApprovalRequestSpec(ApprovalRequestSpec)
	GetApprovalRequestStatus() *ApprovalRequestStatus
	SetApprovalRequestStatus(ApprovalRequestStatus)
}

// +genclient
// +genclient:nonNamespaced
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,categories={fleet,fleet-placement},shortName=csur
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:printcolumn:JSONPath=`.spec.placementName`,name="Placement",type=string
// +kubebuilder:printcolumn:JSONPath=`.status.resourceSnapshotIndexUsed`,name="Resource-Snapshot-Index",type=string
// +kubebuilder:printcolumn:JSONPath=`.status.policySnapshotIndexUsed`,name="Policy-Snapshot-Index",type=string
// +kubebuilder:printcolumn:JSONPath=`.status.conditions[?(@.type=="Initialized")].status`,name="Initialized",type=string
// +kubebuilder:printcolumn:JSONPath=`.status.conditions[?(@.type=="Progressing")].status`,name="Progressing",type=string
// +kubebuilder:printcolumn:JSONPath=`.status.conditions[?(@.type=="Succeeded")].status`,name="Succeeded",type=string
// +kubebuilder:printcolumn:JSONPath=`.metadata.creationTimestamp`,name="Age",type=date
// +kubebuilder:printcolumn:JSONPath=`.spec.stagedRolloutStrategyName`,name="Strategy",priority=1,type=string
// The run name is embedded in approval request names and labels.
// +kubebuilder:validation:XValidation:rule="size(self.metadata.name) < 64",message="metadata.name must be at most 63 characters long"

// ClusterStagedUpdateRun rolls a resource snapshot of a ClusterResourcePlacement
// (with strategy External) out stage by stage.
type ClusterStagedUpdateRun struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec UpdateRunSpec `json:"spec"`

	// +optional
	Status UpdateRunStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ClusterStagedUpdateRunList is a list of ClusterStagedUpdateRuns.
type ClusterStagedUpdateRunList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterStagedUpdateRun `json:"items"`
}

// +genclient
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,categories={fleet,fleet-placement},shortName=sur
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:printcolumn:JSONPath=`.spec.placementName`,name="Placement",type=string
// +kubebuilder:printcolumn:JSONPath=`.status.resourceSnapshotIndexUsed`,name="Resource-Snapshot-Index",type=string
// +kubebuilder:printcolumn:JSONPath=`.status.policySnapshotIndexUsed`,name="Policy-Snapshot-Index",type=string
// +kubebuilder:printcolumn:JSONPath=`.status.conditions[?(@.type=="Initialized")].status`,name="Initialized",type=string
// +kubebuilder:printcolumn:JSONPath=`.status.conditions[?(@.type=="Progressing")].status`,name="Progressing",type=string
// +kubebuilder:printcolumn:JSONPath=`.status.conditions[?(@.type=="Succeeded")].status`,name="Succeeded",type=string
// +kubebuilder:printcolumn:JSONPath=`.metadata.creationTimestamp`,name="Age",type=date
// +kubebuilder:printcolumn:JSONPath=`.spec.stagedRolloutStrategyName`,name="Strategy",priority=1,type=string
// +kubebuilder:validation:XValidation:rule="size(self.metadata.name) < 64",message="metadata.name must be at most 63 characters long"

// StagedUpdateRun is the namespaced twin of ClusterStagedUpdateRun, for a
// ResourcePlacement in the same namespace.
type StagedUpdateRun struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec UpdateRunSpec `json:"spec"`

	// +optional
	Status UpdateRunStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// StagedUpdateRunList is a list of StagedUpdateRuns.
type StagedUpdateRunList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []StagedUpdateRun `json:"items"`
}

// UpdateRunState is the requested state of an update run.
type UpdateRunState string

const (
	// UpdateRunStateInitialize validates and plans the run without rolling out.
	UpdateRunStateInitialize UpdateRunState = "Initialize"
	// UpdateRunStateRun executes (or resumes) the run.
	UpdateRunStateRun UpdateRunState = "Run"
	// UpdateRunStateStop pauses the run.
	UpdateRunStateStop UpdateRunState = "Stop"
)

// UpdateRunSpec is the spec of an update run. What to roll out and how is
// fixed at creation; only the state can be changed to drive the run.
// An unset or "" resourceSnapshotIndex means "latest" and stays that way.
// +kubebuilder:validation:XValidation:rule="(has(oldSelf.resourceSnapshotIndex) && size(oldSelf.resourceSnapshotIndex) > 0) == (has(self.resourceSnapshotIndex) && size(self.resourceSnapshotIndex) > 0) && (!has(self.resourceSnapshotIndex) || size(self.resourceSnapshotIndex) == 0 || self.resourceSnapshotIndex == oldSelf.resourceSnapshotIndex)",message="resourceSnapshotIndex is immutable; create a new update run to roll out another snapshot",fieldPath=".resourceSnapshotIndex"
type UpdateRunSpec struct {
	// PlacementName is the placement to roll out; it must use strategy type
	// External.
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="placementName is immutable"
	// +required
	PlacementName string `json:"placementName"`

	// ResourceSnapshotIndex is the resource snapshot to roll out; empty
	// means the latest one.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	ResourceSnapshotIndex string `json:"resourceSnapshotIndex,omitempty"`

	// StagedUpdateStrategyName names the staged update strategy to follow.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="stagedRolloutStrategyName is immutable"
	// +required
	StagedUpdateStrategyName string `json:"stagedRolloutStrategyName"`

	// State is Initialize (default), Run or Stop. Allowed transitions:
	// Initialize->Run, Run<->Stop. "" is accepted and means Initialize.
	// +kubebuilder:default=Initialize
	// +kubebuilder:validation:Enum=Initialize;Run;Stop;""
	// +kubebuilder:validation:XValidation:rule="!((oldSelf == 'Initialize' || size(oldSelf) == 0) && self == 'Stop')",message="state cannot change from Initialize to Stop; set it to Run first"
	// +kubebuilder:validation:XValidation:rule="!(oldSelf == 'Run' && (self == 'Initialize' || size(self) == 0))",message="state cannot change from Run back to Initialize"
	// +kubebuilder:validation:XValidation:rule="!(oldSelf == 'Stop' && (self == 'Initialize' || size(self) == 0))",message="state cannot change from Stop back to Initialize; set it to Run to resume"
	// +optional
	State UpdateRunState `json:"state,omitempty"`
}

// +genclient
// +genclient:nonNamespaced
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,categories={fleet,fleet-placement},shortName=csus
// +kubebuilder:storageversion
// +kubebuilder:printcolumn:JSONPath=`.metadata.creationTimestamp`,name="Age",type=date

// ClusterStagedUpdateStrategy defines the stages a ClusterStagedUpdateRun
// goes through.
type ClusterStagedUpdateStrategy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec UpdateStrategySpec `json:"spec"`
}

// +kubebuilder:object:root=true

// ClusterStagedUpdateStrategyList is a list of ClusterStagedUpdateStrategies.
type ClusterStagedUpdateStrategyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterStagedUpdateStrategy `json:"items"`
}

// +genclient
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,categories={fleet,fleet-placement},shortName=sus
// +kubebuilder:storageversion
// +kubebuilder:printcolumn:JSONPath=`.metadata.creationTimestamp`,name="Age",type=date

// StagedUpdateStrategy is the namespaced twin of ClusterStagedUpdateStrategy.
type StagedUpdateStrategy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec UpdateStrategySpec `json:"spec"`
}

// +kubebuilder:object:root=true

// StagedUpdateStrategyList is a list of StagedUpdateStrategies.
type StagedUpdateStrategyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []StagedUpdateStrategy `json:"items"`
}

// UpdateStrategySpec is the ordered list of stages.
type UpdateStrategySpec struct {
	// Stages run in order. A cluster may belong to at most one stage and
	// every selected cluster must belong to some stage.
	// +kubebuilder:validation:MaxItems=31
	// +kubebuilder:validation:XValidation:rule="self.all(a, self.exists_one(b, b.name == a.name))",message="stage names must be unique"
	// +required
	Stages []StageConfig `json:"stages"`
}

// StageConfig is one stage.
type StageConfig struct {
	// Name of the stage; used in approval request names, hence the
	// restricted alphabet.
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern="^[a-z0-9]+$"
	// +required
	Name string `json:"name"`

	// LabelSelector picks the clusters of this stage; empty selects all
	// clusters, unset selects none.
	// +optional
	LabelSelector *metav1.LabelSelector `json:"labelSelector,omitempty"`

	// SortingLabelKey orders the clusters of the stage by the integer value
	// of this label, then by name; unset orders by name.
	// +optional
	SortingLabelKey *string `json:"sortingLabelKey,omitempty"`

	// MaxConcurrency is how many clusters of the stage update at once: an
	// integer >= 1 or a percentage of the stage (1%-100%, rounded down, at
	// least 1).
	// +kubebuilder:default=1
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:Pattern="^(100|[1-9][0-9]?)%$"
	// +kubebuilder:validation:XValidation:rule="type(self) == string || self >= 1",message="maxConcurrency must be an integer of at least 1 or a percentage between 1% and 100%"
	// +optional
	MaxConcurrency *intstr.IntOrString `json:"maxConcurrency,omitempty"`

	// AfterStageTasks run after all clusters of the stage are updated.
	// +kubebuilder:validation:MaxItems=2
	// +kubebuilder:validation:XValidation:rule="size(self) < 2 || self[0].type != self[1].type",message="afterStageTasks cannot contain two tasks of the same type"
	// +optional
	AfterStageTasks []StageTask `json:"afterStageTasks,omitempty"`

	// BeforeStageTasks run before the stage starts; only Approval is supported.
	// +kubebuilder:validation:MaxItems=1
	// +kubebuilder:validation:XValidation:rule="self.all(t, t.type == 'Approval')",message="beforeStageTasks only support the Approval task type"
	// +optional
	BeforeStageTasks []StageTask `json:"beforeStageTasks,omitempty"`
}

// StageTaskType is the type of a stage task.
// +kubebuilder:validation:Enum=TimedWait;Approval
type StageTaskType string

const (
	// StageTaskTypeTimedWait waits for waitTime.
	StageTaskTypeTimedWait StageTaskType = "TimedWait"
	// StageTaskTypeApproval waits for an approval request to be approved.
	StageTaskTypeApproval StageTaskType = "Approval"
)

// StageTask is a gate before or after a stage.
// +kubebuilder:validation:XValidation:rule="self.type != 'TimedWait' || has(self.waitTime)",message="waitTime is required when the task type is TimedWait"
// +kubebuilder:validation:XValidation:rule="self.type != 'Approval' || !has(self.waitTime)",message="waitTime cannot be set when the task type is Approval"
type StageTask struct {
	// Type is TimedWait or Approval.
	// +required
	Type StageTaskType `json:"type"`

	// WaitTime is a Go duration using s, m and h units, e.g. 1h30m.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern="^(?:(?:0|[1-9][0-9]*)(\\.[0-9]+)?(?:s|m|h))+$"
	// +optional
	WaitTime *metav1.Duration `json:"waitTime,omitempty"`
}

// UpdateRunStatus is the progress of an update run.
type UpdateRunStatus struct {
	// PolicySnapshotIndexUsed is the policy snapshot index the run is based
	// on; the run fails if it changes.
	// +optional
	PolicySnapshotIndexUsed string `json:"policySnapshotIndexUsed,omitempty"`

	// PolicyObservedClusterCount is the cluster count of that policy.
	// +optional
	PolicyObservedClusterCount int `json:"policyObservedClusterCount,omitempty"`

	// ResourceSnapshotIndexUsed is the resource snapshot being rolled out.
	// +optional
	ResourceSnapshotIndexUsed string `json:"resourceSnapshotIndexUsed,omitempty"`

	// ApplyStrategy is the placement's apply strategy, frozen at start.
	// +optional
	ApplyStrategy *ApplyStrategy `json:"appliedStrategy,omitempty"`

	// UpdateStrategySnapshot is the strategy, frozen at start.
	// +optional
	UpdateStrategySnapshot *UpdateStrategySpec `json:"stagedUpdateStrategySnapshot,omitempty"`

	// StagesStatus has one entry per stage.
	// +optional
	StagesStatus []StageUpdatingStatus `json:"stagesStatus,omitempty"`

	// DeletionStageStatus tracks removal from clusters no longer selected.
	// +optional
	DeletionStageStatus *StageUpdatingStatus `json:"deletionStageStatus,omitempty"`

	// Conditions of the run (Initialized, Progressing, Succeeded).
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// StageUpdatingStatus is the progress of one stage.
type StageUpdatingStatus struct {
	// StageName is the stage.
	// +required
	StageName string `json:"stageName"`

	// Clusters are the clusters of the stage, in update order.
	// +optional
	Clusters []ClusterUpdatingStatus `json:"clusters,omitempty"`

	// AfterStageTaskStatus tracks the after-stage tasks.
	// +kubebuilder:validation:MaxItems=2
	// +optional
	AfterStageTaskStatus []StageTaskStatus `json:"afterStageTaskStatus,omitempty"`

	// BeforeStageTaskStatus tracks the before-stage tasks.
	// +kubebuilder:validation:MaxItems=1
	// +optional
	BeforeStageTaskStatus []StageTaskStatus `json:"beforeStageTaskStatus,omitempty"`

	// StartTime is when the stage started.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`

	// EndTime is when the stage finished.
	// +optional
	EndTime *metav1.Time `json:"endTime,omitempty"`

	// Conditions of the stage (Progressing, Succeeded).
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ClusterUpdatingStatus is the progress on one cluster.
type ClusterUpdatingStatus struct {
	// ClusterName is the cluster.
	// +required
	ClusterName string `json:"clusterName"`

	// ResourceOverrideSnapshots are the ResourceOverride snapshots applied.
	// +optional
	ResourceOverrideSnapshots []NamespacedName `json:"resourceOverrideSnapshots,omitempty"`

	// ClusterResourceOverrideSnapshots are the ClusterResourceOverride
	// snapshots applied.
	// +optional
	ClusterResourceOverrideSnapshots []string `json:"clusterResourceOverrideSnapshots,omitempty"`

	// Conditions (Started, Succeeded).
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// StageTaskStatus is the progress of one stage task.
type StageTaskStatus struct {
	// Type of the task.
	// +required
	Type StageTaskType `json:"type"`

	// ApprovalRequestName is the approval request created for the task.
	// +optional
	ApprovalRequestName string `json:"approvalRequestName,omitempty"`

	// Conditions (ApprovalRequestCreated, ApprovalRequestApproved, WaitTimeElapsed).
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// +genclient
// +genclient:nonNamespaced
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,categories={fleet,fleet-placement},shortName=careq
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:printcolumn:JSONPath=`.spec.parentStageRollout`,name="Update-Run",type=string
// +kubebuilder:printcolumn:JSONPath=`.spec.targetStage`,name="Stage",type=string
// +kubebuilder:printcolumn:JSONPath=`.status.conditions[?(@.type=="Approved")].status`,name="Approved",type=string
// +kubebuilder:printcolumn:JSONPath=`.metadata.creationTimestamp`,name="Age",type=date

// ClusterApprovalRequest gates a stage of a ClusterStagedUpdateRun; a user
// approves it by setting the Approved condition.
type ClusterApprovalRequest struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec is immutable"
	// +required
	Spec ApprovalRequestSpec `json:"spec"`

	// +optional
	Status ApprovalRequestStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ClusterApprovalRequestList is a list of ClusterApprovalRequests.
type ClusterApprovalRequestList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterApprovalRequest `json:"items"`
}

// +genclient
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,categories={fleet,fleet-placement},shortName=areq
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:printcolumn:JSONPath=`.spec.parentStageRollout`,name="Update-Run",type=string
// +kubebuilder:printcolumn:JSONPath=`.spec.targetStage`,name="Stage",type=string
// +kubebuilder:printcolumn:JSONPath=`.status.conditions[?(@.type=="Approved")].status`,name="Approved",type=string
// +kubebuilder:printcolumn:JSONPath=`.metadata.creationTimestamp`,name="Age",type=date

// ApprovalRequest is the namespaced twin of ClusterApprovalRequest.
type ApprovalRequest struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec is immutable"
	// +required
	Spec ApprovalRequestSpec `json:"spec"`

	// +optional
	Status ApprovalRequestStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ApprovalRequestList is a list of ApprovalRequests.
type ApprovalRequestList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ApprovalRequest `json:"items"`
}

// ApprovalRequestSpec names the run and stage being gated.
type ApprovalRequestSpec struct {
	// TargetUpdateRun is the update run.
	// +required
	TargetUpdateRun string `json:"parentStageRollout"`

	// TargetStage is the stage.
	// +required
	TargetStage string `json:"targetStage"`
}

// ApprovalRequestStatus carries the approval.
type ApprovalRequestStatus struct {
	// Conditions: Approved (set by the user) and ApprovalAccepted (set by
	// the controller).
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// GetUpdateRunSpec returns the spec.
func (r *ClusterStagedUpdateRun) GetUpdateRunSpec() *UpdateRunSpec { return &r.Spec }

// SetUpdateRunSpec sets the spec.
func (r *ClusterStagedUpdateRun) SetUpdateRunSpec(s UpdateRunSpec) { r.Spec = s }

// GetUpdateRunStatus returns the status.
func (r *ClusterStagedUpdateRun) GetUpdateRunStatus() *UpdateRunStatus { return &r.Status }

// SetUpdateRunStatus sets the status.
func (r *ClusterStagedUpdateRun) SetUpdateRunStatus(s UpdateRunStatus) { r.Status = s }

// GetUpdateRunSpec returns the spec.
func (r *StagedUpdateRun) GetUpdateRunSpec() *UpdateRunSpec { return &r.Spec }

// SetUpdateRunSpec sets the spec.
func (r *StagedUpdateRun) SetUpdateRunSpec(s UpdateRunSpec) { r.Spec = s }

// GetUpdateRunStatus returns the status.
func (r *StagedUpdateRun) GetUpdateRunStatus() *UpdateRunStatus { return &r.Status }

// SetUpdateRunStatus sets the status.
func (r *StagedUpdateRun) SetUpdateRunStatus(s UpdateRunStatus) { r.Status = s }

// GetUpdateStrategySpec returns the spec.
func (s *ClusterStagedUpdateStrategy) GetUpdateStrategySpec() *UpdateStrategySpec { return &s.Spec }

// SetUpdateStrategySpec sets the spec.
func (s *ClusterStagedUpdateStrategy) SetUpdateStrategySpec(spec UpdateStrategySpec) {
	s.Spec = spec
}

// GetUpdateStrategySpec returns the spec.
func (s *StagedUpdateStrategy) GetUpdateStrategySpec() *UpdateStrategySpec { return &s.Spec }

// SetUpdateStrategySpec sets the spec.
func (s *StagedUpdateStrategy) SetUpdateStrategySpec(spec UpdateStrategySpec) { s.Spec = spec }

// GetApprovalRequestSpec returns the spec.
func (a *ClusterApprovalRequest) GetApprovalRequestSpec() *ApprovalRequestSpec { return &a.Spec }

// SetApprovalRequestSpec sets the spec.
func (a *ClusterApprovalRequest) SetApprovalRequestSpec(s ApprovalRequestSpec) { a.Spec = s }

// GetApprovalRequestStatus returns the status.
func (a *ClusterApprovalRequest) GetApprovalRequestStatus() *ApprovalRequestStatus {
	return &a.Status
}

// SetApprovalRequestStatus sets the status.
func (a *ClusterApprovalRequest) SetApprovalRequestStatus(s ApprovalRequestStatus) { a.Status = s }

// GetApprovalRequestSpec returns the spec.
func (a *ApprovalRequest) GetApprovalRequestSpec() *ApprovalRequestSpec { return &a.Spec }

// SetApprovalRequestSpec sets the spec.
func (a *ApprovalRequest) SetApprovalRequestSpec(s ApprovalRequestSpec) { a.Spec = s }

// GetApprovalRequestStatus returns the status.
func (a *ApprovalRequest) GetApprovalRequestStatus() *ApprovalRequestStatus { return &a.Status }

// SetApprovalRequestStatus sets the status.
func (a *ApprovalRequest) SetApprovalRequestStatus(s ApprovalRequestStatus) { a.Status = s }

var (
	_ UpdateRunObj       = &ClusterStagedUpdateRun{}
	_ UpdateRunObj       = &StagedUpdateRun{}
	_ UpdateStrategyObj  = &ClusterStagedUpdateStrategy{}
	_ UpdateStrategyObj  = &StagedUpdateStrategy{}
	_ ApprovalRequestObj = &ClusterApprovalRequest{}
	_ ApprovalRequestObj = &ApprovalRequest{}
)

func init() {
	SchemeBuilder.Register(
		&ClusterStagedUpdateRun{}, &ClusterStagedUpdateRunList{},
		&StagedUpdateRun{}, &StagedUpdateRunList{},
		&ClusterStagedUpdateStrategy{}, &ClusterStagedUpdateStrategyList{},
		&StagedUpdateStrategy{}, &StagedUpdateStrategyList{},
		&ClusterApprovalRequest{}, &ClusterApprovalRequestList{},
		&ApprovalRequest{}, &ApprovalRequestList{},
	)
}
