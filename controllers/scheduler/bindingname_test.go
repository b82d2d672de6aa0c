package scheduler

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

func TestBindingNameIsALabelValue(t *testing.T) {
	long := strings.Repeat("p", 63)
	tests := []struct{ placement, cluster, prefix string }{
		{"web", "member-1", "web-member-1-"},
		{long, "member-2", strings.Repeat("p", 45) + "-member-2-"},
		{"web", strings.Repeat("c", 63), "web-" + strings.Repeat("c", 50) + "-"},
		{long, strings.Repeat("c", 63), strings.Repeat("p", 27) + "-" + strings.Repeat("c", 26) + "-"},
		{strings.Repeat("a.", 30), "member-12", strings.Repeat("a.", 21) + "a-member-12-"},
	}
	for _, tt := range tests {
		name := bindingName(tt.placement, tt.cluster)
		if errs := append(validation.IsValidLabelValue(name), validation.IsDNS1123Subdomain(name)...); len(errs) > 0 {
			t.Errorf("bindingName(%q, %q) = %q: %v", tt.placement, tt.cluster, name, errs)
		}
		if !strings.HasPrefix(name, tt.prefix) || len(name) != len(tt.prefix)+8 {
			t.Errorf("bindingName(%q, %q) = %q, want %q and 8 random characters", tt.placement, tt.cluster, name, tt.prefix)
		}
	}
}
