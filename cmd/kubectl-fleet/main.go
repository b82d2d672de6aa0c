// Command kubectl-fleet is the Fleetplane kubectl plugin. Installed (or linked)
// as kubectl-ws it behaves as `kubectl fleet ws`, so `kubectl ws` works too.
package main

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/fleetplane/fleetplane/cmd/kubectl-fleet/app"
)

func main() {
	cmd := app.NewCommand()
	if strings.TrimSuffix(filepath.Base(os.Args[0]), ".exe") == "kubectl-ws" {
		cmd.SetArgs(append([]string{"ws"}, os.Args[1:]...))
	}
	if err := cmd.Execute(); err != nil {
		os.Exit(1)
	}
}
