//go:build tools

// Package peers pins the module that carries the official SARIF 2.1.0 JSON schema (OASIS,
// errata 01) as Go source: e2e/build-peers.sh copies the schema out of it, and the SARIF tests
// of `liveproof lint` validate against that copy. Nothing of it is built.
package peers

import _ "github.com/owenrumney/go-sarif/v3/pkg/report/v210/sarif"
