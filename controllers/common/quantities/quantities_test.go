package quantities

import (
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in string
		ok bool
	}{
		{"500m", true},
		{"1.5Gi", true},
		{"8E", true},
		{"8Ei", true},
		{"1e3", true},
		{"1e+3", true},
		{"1e-3", true},
		{"2E999", true},
		{"1e1000", false},
		{"1e-1000", false},
		{"1e-99999999", false},
		{"1e99999999999999999999", false},
		{strings.Repeat("9", MaxLength+1), false},
		{"five", false},
	}
	for _, tt := range tests {
		start := time.Now()
		q, err := Parse(tt.in)
		if took := time.Since(start); took > time.Second {
			t.Errorf("Parse(%.20q) took %v", tt.in, took)
		}
		if (err == nil) != tt.ok {
			t.Errorf("Parse(%.20q) = %s, %v; want ok=%v", tt.in, q.String(), err, tt.ok)
		}
	}
}
