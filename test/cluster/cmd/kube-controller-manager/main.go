// Command kube-controller-manager is the upstream controller manager, built
// from k8s.io/kubernetes so that Deployments really roll out on local members.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-controller-manager/app"
)

func main() {
	os.Exit(cli.Run(app.NewControllerManagerCommand()))
}
