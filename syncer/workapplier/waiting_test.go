package workapplier

import (
	"slices"
	"testing"
)

func TestWaitingWakesOnlyTheOtherWorksOfThePlacement(t *testing.T) {
	var w waiting
	w.add("a-1", "a")
	w.add("a-2", "a")
	w.add("b-1", "b")
	got := w.wake("a-2", "a")
	if !slices.Equal(got, []string{"a-1"}) {
		t.Fatalf("a change of a-2 wakes %v, want [a-1]", got)
	}
	if got := w.wake("a-1", "a"); !slices.Equal(got, []string{"a-2"}) {
		t.Fatalf("a-2 still waits: woken %v, want [a-2]", got)
	}
	if got := w.wake("a-3", "a"); len(got) != 0 {
		t.Fatalf("woken Works wait no more: woken %v", got)
	}
	w.remove("b-1")
	if got := w.wake("b-2", "b"); len(got) != 0 {
		t.Fatalf("a removed Work is not woken: woken %v", got)
	}
}
