// Command kube-scheduler is the upstream scheduler, built from k8s.io/kubernetes
// so that pods of local members land on their (simulated) nodes.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"
)

func main() {
	os.Exit(cli.Run(app.NewSchedulerCommand()))
}
