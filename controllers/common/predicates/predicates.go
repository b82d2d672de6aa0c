// Package predicates holds event filters shared by the hub's controllers.
package predicates

import (
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

// DeletionStarted passes updates that set the deletion timestamp, which do
// not change an object's generation.
type DeletionStarted struct{ predicate.Funcs }

// Update implements predicate.Predicate.
func (DeletionStarted) Update(e event.UpdateEvent) bool {
	return e.ObjectOld.GetDeletionTimestamp().IsZero() && !e.ObjectNew.GetDeletionTimestamp().IsZero()
}
