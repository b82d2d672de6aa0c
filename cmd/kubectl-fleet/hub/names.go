package hub

import (
	"fmt"

	"github.com/spf13/cobra"
)

// NameFlag lets a command take the name of the object it acts on either as
// its one argument or with a flag, the form KubeFleet's kubectl-fleet and
// the scripts written for it use (--name, --cluster-name).
type NameFlag struct {
	flag  string
	value string
}

// AddNameFlag registers --flag on cmd, described as usage.
func AddNameFlag(cmd *cobra.Command, flag, usage string) *NameFlag {
	n := &NameFlag{flag: flag}
	cmd.Flags().StringVar(&n.value, flag, "", usage+" (or give it as the argument)")
	return n
}

// Name returns the name from the argument left in args or from the flag:
// exactly one of them.
func (n *NameFlag) Name(args []string) (string, error) {
	switch {
	case len(args) > 1:
		return "", fmt.Errorf("expected one name, got %d arguments: %v", len(args), args)
	case len(args) == 1 && n.value != "" && args[0] != n.value:
		return "", fmt.Errorf("two names given: %q as the argument and %q with --%s; give one", args[0], n.value, n.flag)
	case len(args) == 1:
		return args[0], nil
	case n.value != "":
		return n.value, nil
	}
	return "", fmt.Errorf("no name given: pass it as the argument or with --%s", n.flag)
}
