// Command kubectl-fleet is the Fleetplane kubectl plugin. Installed (or linked)
// as kubectl-ws it behaves as `kubectl fleet ws`, so `kubectl ws` works too.
package main

import (
	"context"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/fleetplane/fleetplane/cmd/kubectl-fleet/app"
)

func main() {
	cmd := app.NewCommand()
	if strings.TrimSuffix(filepath.Base(os.Args[0]), ".exe") == "kubectl-ws" {
		cmd.SetArgs(append([]string{"ws"}, os.Args[1:]...))
	}
	// Ctrl-C cancels the command's context: a long-running command (the
	// board, a drain) stops cleanly.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := cmd.ExecuteContext(ctx)
	stop()
	if err != nil {
		os.Exit(1)
	}
}
