package app

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
)

// TestEveryCommandHasExamples: each runnable command shows how it is used
// in its --help.
func TestEveryCommandHasExamples(t *testing.T) {
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Runnable() && c.Example == "" {
			t.Errorf("%q has no Example", c.CommandPath())
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(NewCommand())
}

// TestKubeFleetCommandForms: the forms KubeFleet's kubectl-fleet and its
// scripts use resolve to our commands.
func TestKubeFleetCommandForms(t *testing.T) {
	root := NewCommand()
	for form, want := range map[string]string{
		"draincluster":    "drain",
		"uncordoncluster": "uncordon",
		"approve":         "approve",
	} {
		cmd, _, err := root.Find([]string{form})
		if err != nil || cmd.Name() != want {
			t.Errorf("%s resolves to %v (%v), want %s", form, cmd, err, want)
		}
	}
	for cmd, flag := range map[string]string{"drain": "cluster-name", "uncordon": "cluster-name", "cordon": "cluster-name", "approve": "name"} {
		c, _, _ := root.Find([]string{cmd})
		if c.Flags().Lookup(flag) == nil {
			t.Errorf("%s has no --%s", cmd, flag)
		}
	}
	if root.PersistentFlags().Lookup("hub-cluster-context") == nil {
		t.Error("no --hub-cluster-context")
	}
	if got := root.UseLine(); !strings.HasPrefix(got, "kubectl fleet") {
		t.Errorf("usage line %q, want it to start with kubectl fleet", got)
	}
}

func TestHubClusterContextIsTheContext(t *testing.T) {
	flags := genericclioptions.NewConfigFlags(true)
	if err := useHubContext(flags, "hub"); err != nil || *flags.Context != "hub" {
		t.Fatalf("context %q, %v; want hub", *flags.Context, err)
	}
	if err := useHubContext(flags, "hub"); err != nil {
		t.Errorf("the same context twice: %v", err)
	}
	if err := useHubContext(flags, "other"); err == nil {
		t.Error("two different contexts accepted")
	}
}

// kubectl passes its flags after the plugin's: "kubectl fleet --help
// --kubeconfig FILE" is a help request, not the command FILE.
func TestHelpBeforeAFlagWithAValue(t *testing.T) {
	cmd := NewCommand()
	var out strings.Builder
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs([]string{"--help", "--kubeconfig", "/nonexistent/kubeconfig"})
	if err := cmd.Execute(); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "kubectl fleet [command]") {
		t.Errorf("no usage printed:\n%s", out.String())
	}
}
