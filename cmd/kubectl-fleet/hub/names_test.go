package hub

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

func TestNameFromArgumentOrFlag(t *testing.T) {
	cases := []struct {
		args    []string
		flag    string
		want    string
		wantErr string
	}{
		{args: []string{"member-1"}, want: "member-1"},
		{flag: "member-1", want: "member-1"},
		{args: []string{"member-1"}, flag: "member-1", want: "member-1"},
		{args: []string{"member-1"}, flag: "member-2", wantErr: "two names given"},
		{args: []string{"a", "b"}, wantErr: "expected one name"},
		{wantErr: "--cluster-name"},
	}
	for _, c := range cases {
		n := AddNameFlag(&cobra.Command{}, "cluster-name", "the member cluster")
		n.value = c.flag
		got, err := n.Name(c.args)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%v --cluster-name=%q: error %v, want one containing %q", c.args, c.flag, err, c.wantErr)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%v --cluster-name=%q: %q, %v; want %q", c.args, c.flag, got, err, c.want)
		}
	}
}
