package join

import (
	"os"
	"os/exec"
	"testing"
)

// TestIsSyncerOf keeps unjoin from signalling a process that merely reuses
// a dead syncer's pid.
func TestIsSyncerOf(t *testing.T) {
	if isSyncerOf(os.Getpid(), "member-1") {
		t.Fatal("the test process was taken for a syncer")
	}
	sleep := exec.Command("sleep", "30")
	if err := sleep.Start(); err != nil {
		t.Skip("no sleep binary:", err)
	}
	defer func() { _ = sleep.Process.Kill(); _ = sleep.Wait() }()
	if isSyncerOf(sleep.Process.Pid, "member-1") {
		t.Fatal("sleep was taken for a syncer")
	}
}
