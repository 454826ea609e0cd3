// Package peers measures the sidecar beside the fan-out servers users
// compare it with, in the same run: today centrifuge
// (github.com/centrifugal/centrifuge, the engine of Centrifugo) with its
// WebSocket transport, JSON protocol and in-memory broker. It is a module
// of its own so the peers' dependencies stay out of wsfan's. Run it with
// `make bench` (or go test -bench . in this folder); `make test` runs
// each benchmark once.
package peers
