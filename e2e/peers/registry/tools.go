//go:build tools

// Package peers pins the OCI registry (CNCF distribution) the liveproof digest tests push
// images to and resolve tags against.
package peers

import _ "github.com/distribution/distribution/v3/cmd/registry"
