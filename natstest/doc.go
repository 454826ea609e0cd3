// Package natstest holds the tests and benchmarks of pkg/natsbridge that
// run an embedded nats-server in-process. It is its own module so that
// the library's go.mod does not carry the server.
package natstest
