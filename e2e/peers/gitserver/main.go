// Command gitserver serves git repositories over HTTP for the real Flux stories
// (crates/liveproof/tests/real_controllers.rs): Flux's own test git server
// (github.com/fluxcd/pkg/gittestserver), which source-controller's tests use too. The story
// pushes commits to it with the git CLI (a repository is created on its first push) and
// source-controller fetches from it.
//
//	gitserver DIR   serve the repositories under DIR; prints the base URL as its first line,
//	                then serves until it is killed
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/fluxcd/pkg/gittestserver"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: gitserver DIR")
		os.Exit(2)
	}
	srv := gittestserver.NewGitServer(os.Args[1]).AutoCreate()
	if err := srv.StartHTTP(); err != nil {
		fmt.Fprintf(os.Stderr, "gitserver: %v\n", err)
		os.Exit(1)
	}
	fmt.Println(srv.HTTPAddress())
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	<-stop
	srv.StopHTTP()
}
