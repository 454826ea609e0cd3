package main

import "image/color"

// chart is one SVG: a row of panels under a title, each panel one
// benchmark's bars with its own vertical scale.
type chart struct {
	file   string // written into the output directory
	title  string
	note   string // the line under the title
	panels []panel
}

// panel is one benchmark and unit, drawn as one bar per implementation
// (and per file).
type panel struct {
	title string // default: the benchmark
	bench string // without the impl part: "CallEcho/server=inproc/callers=1"
	unit  string // as the benchmark writes it: "req/s"
	axis  string // the vertical axis's label; default: the unit
}

// impls are the implementations compared, in the order drawn.
var impls = []struct {
	name  string // the impl= value of the benchmark name
	label string
	color color.Color
}{
	{"wsfan", "wsfan", color.RGBA{0x1f, 0x77, 0xb4, 0xff}},
	{"geth", "go-ethereum", color.RGBA{0xff, 0x7f, 0x0e, 0xff}},
	{"gorilla", "gorilla", color.RGBA{0x2c, 0xa0, 0x2c, 0xff}},
}

const higher, lower = "higher is better", "lower is better"

// percentiles is one panel per percentile of bench's latency, in µs.
func percentiles(bench string, ps ...string) []panel {
	panels := make([]panel, len(ps))
	for i, p := range ps {
		panels[i] = panel{title: p, bench: bench, unit: p + "-µs", axis: "µs"}
	}
	return panels
}

// sameUnit is one panel per benchmark, all in unit.
func sameUnit(unit string, benches ...string) []panel {
	panels := make([]panel, len(benches))
	for i, b := range benches {
		panels[i] = panel{bench: b, unit: unit}
	}
	return panels
}

// charts are the pictures of BENCHMARKS.md: the peer comparisons of
// bench/, measured in the same run against the same loopback servers.
var charts = []chart{
	{
		file:  "peers-throughput.svg",
		title: "Throughput: notifications to a Go channel, calls on the echo server and on exchangetest",
		note:  higher,
		panels: []panel{
			{bench: "Notify", unit: "msg/s"},
			{bench: "CallEcho/server=inproc/callers=1", unit: "req/s"},
			{bench: "CallEcho/server=inproc/callers=100", unit: "req/s"},
			{bench: "CallConcurrent/callers=100", unit: "req/s"},
		},
	},
	{
		file:   "peers-call-size.svg",
		title:  "Sequential calls on exchangetest by response size",
		note:   higher,
		panels: sameUnit("req/s", "Call/size=small", "Call/size=medium", "Call/size=large"),
	},
	{
		file:   "peers-concurrent.svg",
		title:  "Concurrent callers on exchangetest",
		note:   higher,
		panels: sameUnit("req/s", "CallConcurrent/callers=1", "CallConcurrent/callers=10", "CallConcurrent/callers=50", "CallConcurrent/callers=100"),
	},
	{
		file:   "peers-latency.svg",
		title:  "Sequential call latency on the echo server (CallEcho/server=inproc/callers=1)",
		note:   lower,
		panels: percentiles("CallEcho/server=inproc/callers=1", "p50", "p90", "p99", "p99.9"),
	},
	{
		file:   "peers-getlogs.svg",
		title:  "eth_getLogs calls by number of logs in the result",
		note:   higher,
		panels: sameUnit("MB/s", "GetLogsCall/logs=100", "GetLogsCall/logs=1000", "GetLogsCall/logs=5000"),
	},
	{
		file:   "peers-allocs.svg",
		title:  "Allocations per message or call, the in-process server's included",
		note:   lower,
		panels: sameUnit("allocs/op", "Notify", "CallEcho/server=inproc/callers=1", "CallEcho/server=inproc/callers=100", "Call/size=small"),
	},
}
