// Command fleet-hub runs the Fleetplane hub: a kcp control plane in-process,
// bootstrapped with the fleet workspaces and APIs.
package main

import (
	"os"

	"github.com/fleetplane/fleetplane/cmd/fleet-hub/app"
)

func main() {
	if err := app.NewCommand().Execute(); err != nil {
		os.Exit(1)
	}
}
