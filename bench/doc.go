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
// This is its own module so that go-ethereum stays out of the library's
// go.mod. Every benchmark does bounded work per iteration and bounded
// setup, so `go test -bench . -benchtime 1x` runs the whole suite in CI in
// seconds, without timing anything.
package bench
