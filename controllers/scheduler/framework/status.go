package framework

import (
	"fmt"
	"strings"
)

// StatusCode is the outcome of running a plugin at an extension point.
type StatusCode int

const (
	// Success means the plugin ran and found nothing wrong.
	Success StatusCode = iota
	// ClusterUnschedulable means the cluster cannot take the placement.
	ClusterUnschedulable
	// Skip means the plugin has nothing to do for this placement; the framework
	// then skips the plugin's later extension points of the same stage.
	Skip
	// InternalError means the plugin failed; the cycle is aborted.
	InternalError
)

var statusCodeNames = [...]string{"Success", "ClusterUnschedulable", "Skip", "InternalError"}

func (c StatusCode) String() string {
	if c < 0 || int(c) >= len(statusCodeNames) {
		return fmt.Sprintf("StatusCode(%d)", int(c))
	}
	return statusCodeNames[c]
}

// Status is what a plugin reports. A nil *Status means Success, so plugins do
// not allocate on the happy path. Statuses are never mutated once built, so a
// plugin may return the same one for many clusters.
type Status struct {
	code    StatusCode
	reasons []string
	err     error
}

// NewStatus returns a status with the given code and human-readable reasons.
func NewStatus(code StatusCode, reasons ...string) *Status {
	return &Status{code: code, reasons: reasons}
}

// Unschedulable is shorthand for a ClusterUnschedulable status.
func Unschedulable(reasons ...string) *Status {
	return NewStatus(ClusterUnschedulable, reasons...)
}

// FromError wraps an error in an InternalError status.
func FromError(err error) *Status {
	return &Status{code: InternalError, reasons: []string{err.Error()}, err: err}
}

// Code returns the status code; Success for a nil status.
func (s *Status) Code() StatusCode {
	if s == nil {
		return Success
	}
	return s.code
}

// IsSuccess reports whether the status is Success.
func (s *Status) IsSuccess() bool { return s.Code() == Success }

// IsSkip reports whether the status is Skip.
func (s *Status) IsSkip() bool { return s.Code() == Skip }

// IsClusterUnschedulable reports whether the status is ClusterUnschedulable.
func (s *Status) IsClusterUnschedulable() bool { return s.Code() == ClusterUnschedulable }

// IsInternalError reports whether the status is InternalError.
func (s *Status) IsInternalError() bool { return s.Code() == InternalError }

// Reasons returns the reasons given with the status.
func (s *Status) Reasons() []string {
	if s == nil {
		return nil
	}
	return s.reasons
}

// Message joins the reasons; it is what ends up in a cluster decision.
func (s *Status) Message() string { return strings.Join(s.Reasons(), "; ") }

// Err returns the error of an InternalError status, or nil.
func (s *Status) Err() error {
	if s == nil {
		return nil
	}
	return s.err
}

func (s *Status) String() string {
	if len(s.Reasons()) == 0 {
		return s.Code().String()
	}
	return s.Code().String() + ": " + s.Message()
}
