package ws

import (
	"strings"
	"testing"
)

func TestNewWorkspace(t *testing.T) {
	ws, err := newWorkspace("team-b", "root:fleet-team", "name=shard-1")
	if err != nil {
		t.Fatal(err)
	}
	if ws.Spec.Type == nil || ws.Spec.Type.Path != "root" || ws.Spec.Type.Name != "fleet-team" {
		t.Errorf("type = %+v, want fleet-team at root", ws.Spec.Type)
	}
	if ws.Spec.Location == nil || ws.Spec.Location.Selector.MatchLabels["name"] != "shard-1" {
		t.Errorf("location = %+v, want the shard named shard-1", ws.Spec.Location)
	}

	ws, err = newWorkspace("team-c", "", "")
	if err != nil {
		t.Fatal(err)
	}
	if ws.Spec.Type != nil || ws.Spec.Location != nil {
		t.Errorf("a workspace with neither type nor location asked for got %+v", ws.Spec)
	}

	if _, err := newWorkspace("team-d", "", "name in (shard-1"); err == nil || !strings.Contains(err.Error(), "--location-selector") {
		t.Errorf("a malformed selector gave %v, want an error naming --location-selector", err)
	}
}
