package huburl

import (
	"testing"

	"github.com/kcp-dev/logicalcluster/v3"
)

func TestForReplacesTheWorkspace(t *testing.T) {
	for host, want := range map[string]string{
		"https://hub:6443":                             "https://hub:6443/clusters/root:fleet",
		"https://hub:6443/":                            "https://hub:6443/clusters/root:fleet",
		"https://hub:6443/clusters/root:teams:team-a":  "https://hub:6443/clusters/root:fleet",
		"https://proxy/kcp/clusters/root:teams:team-a": "https://proxy/kcp/clusters/root:fleet",
	} {
		if got := For(host, logicalcluster.NewPath("root:fleet")); got != want {
			t.Errorf("For(%q) = %q, want %q", host, got, want)
		}
	}
	if got := Base("https://hub:6443/clusters/root"); got != "https://hub:6443" {
		t.Errorf("Base = %q", got)
	}
}
