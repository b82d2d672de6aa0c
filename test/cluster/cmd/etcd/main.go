// Command etcd is a plain etcd server built from the etcd Go module, used by
// tests (external-etcd hubs) and as the storage of local member clusters.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
