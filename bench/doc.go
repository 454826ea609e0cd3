// Package bench holds wsfan's benchmark suites. Each file mirrors one group
// of rows of the published reports listed in ../../shared/REFERENCE.md (the
// Ethereal and Thalex Rust SDKs, node_lib, geeRPC and the Brane Java SDK)
// with the same workload shape, and measures peers in the same run:
// go-ethereum's rpc client and raw gorilla/websocket reads against the same
// pkg/exchangetest server and the same frames.
//
// Benchmarks that compare implementations name them with an impl= key
// (BenchmarkCall/size=small/impl=wsfan, .../impl=geth, .../impl=gorilla), so
// `benchstat -col /impl` puts them side by side. See BENCHMARKS.md at the
// repository root for the numbers and `make bench` to reproduce them.
//
// Benchmarks of what a deployed client meets (BenchmarkCallEcho,
// BenchmarkNotifyBlast) also take a server= key: server=inproc runs the
// node server in the benchmark's process, server=process in a child
// process (the test binary run again with WSFAN_BENCH_NODE_SERVER set),
// started on a free loopback port for the benchmark and killed after it.
// The RPC and notification benchmarks report the CPU time and context
// switches per operation of this process (cpu-µs/op, ctxsw/op; an
// in-process server's included) and, for a child server, of the server
// (server-cpu-µs/op, server-ctxsw/op), read from /proc on Linux.
//
// This is its own module so that go-ethereum stays out of the library's
// go.mod. Every benchmark does bounded work per iteration and bounded
// setup, so `go test -bench . -benchtime 1x` runs the whole suite in CI in
// seconds, without timing anything.
package bench
