package main

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// watchUntil hands every object of list's kind, as it is and as it
// changes, to seen until seen says it is done, watching again when the API
// server ends a watch (a new watch begins with every object there is).
// The harness waits by watching, not by listing every second: a list of
// 1,000 MemberClusters each second took a fifth of the hub's CPU while
// members joined, from the very work being timed.
func watchUntil(ctx context.Context, c client.WithWatch, list client.ObjectList, seen func(obj client.Object, deleted bool) bool, opts ...client.ListOption) error {
	for {
		w, err := c.Watch(ctx, list, opts...)
		if err == nil {
			done, ended := watchEvents(ctx, w, seen)
			w.Stop()
			if done {
				return nil
			}
			if !ended {
				return context.Cause(ctx)
			}
		}
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-time.After(time.Second):
		}
	}
}

// watchEvents hands the watch's objects to seen until seen is done, the
// server ends the watch, or ctx ends.
func watchEvents(ctx context.Context, w watch.Interface, seen func(obj client.Object, deleted bool) bool) (done, ended bool) {
	for {
		select {
		case <-ctx.Done():
			return false, false
		case ev, ok := <-w.ResultChan():
			if !ok {
				return false, true
			}
			obj, isObject := ev.Object.(client.Object)
			if !isObject || (ev.Type != watch.Added && ev.Type != watch.Modified && ev.Type != watch.Deleted) {
				continue
			}
			if seen(obj, ev.Type == watch.Deleted) {
				return true, false
			}
		}
	}
}
