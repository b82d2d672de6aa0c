package main

import (
	"strings"
	"testing"
)

// Bad flag values are refused before anything starts, saying what is allowed.
func TestBadFlagsAreRefused(t *testing.T) {
	for args, want := range map[string]string{
		"--heartbeat-period-seconds=0":   "--heartbeat-period-seconds must be between 1 and 600",
		"--heartbeat-period-seconds=601": "--heartbeat-period-seconds must be between 1 and 600",
		"--members=9":                    "--members must be between 0 and 4",
	} {
		cmd := newCommand()
		cmd.SetArgs([]string{args})
		cmd.SetOut(&strings.Builder{})
		cmd.SetErr(&strings.Builder{})
		if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one containing %q", args, err, want)
		}
	}
}
