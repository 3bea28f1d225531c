// Command etcd is etcd's own server entry point, built from
// go.etcd.io/etcd/server/v3 at the version tools/kube/go.mod names, for the
// Kubernetes API server test tier (scripts/kube-up.sh).
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
