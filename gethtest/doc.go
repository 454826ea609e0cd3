// Package gethtest checks wsfan against go-ethereum's own code, not
// against wsfan's test node: a node from go-ethereum's simulated backend
// (ethclient/simulated) serving WebSocket on loopback, and go-ethereum's
// own clients (rpc, ethclient) as the programs behind the sidecar. It is
// a module of its own so that the library does not depend on
// go-ethereum; it holds tests only.
package gethtest
