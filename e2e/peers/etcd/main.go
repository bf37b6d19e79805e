// Command etcd is etcd's own server main (etcdmain.Main), at the release pinned in go.mod:
// the storage the end-to-end tests' kube-apiserver runs on.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
