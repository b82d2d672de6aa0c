package tenancy

import (
	"testing"

	"github.com/kcp-dev/logicalcluster/v3"
)

func TestCovers(t *testing.T) {
	tests := []struct {
		patterns []string
		path     string
		want     bool
	}{
		{[]string{"root:teams:a"}, "root:teams:a", true},
		{[]string{"root:teams:a"}, "root:teams:ab", false},
		{[]string{"root:teams:*"}, "root:teams:a", true},
		{[]string{"root:teams:*"}, "root:teams:a:sub", true},
		{[]string{"root:teams:*"}, "root:teams", false},
		{[]string{"root:teams:*"}, "root:teamsx:a", false},
		{[]string{"root:other", "root:teams:b"}, "root:teams:b", true},
	}
	for _, tc := range tests {
		if got := Covers(tc.patterns, logicalcluster.NewPath(tc.path)); got != tc.want {
			t.Errorf("Covers(%v, %s) = %v, want %v", tc.patterns, tc.path, got, tc.want)
		}
	}
}
