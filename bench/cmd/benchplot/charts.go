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
	bench string // without the impl part: "CallEcho/callers=1"
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

// charts are the pictures of BENCHMARKS.md: the peer comparisons of
// bench/, measured in the same run against the same loopback servers.
var charts = []chart{
	{
		file:  "peers-throughput.svg",
		title: "Throughput: notifications to a Go channel, calls on the echo server and on exchangetest",
		note:  higher,
		panels: []panel{
			{bench: "Notify", unit: "msg/s"},
			{bench: "CallEcho/callers=1", unit: "req/s"},
			{bench: "CallEcho/callers=100", unit: "req/s"},
			{bench: "CallConcurrent/callers=100", unit: "req/s"},
		},
	},
	{
		file:  "peers-call-size.svg",
		title: "Sequential calls on exchangetest by response size",
		note:  higher,
		panels: []panel{
			{bench: "Call/size=small", unit: "req/s"},
			{bench: "Call/size=medium", unit: "req/s"},
			{bench: "Call/size=large", unit: "req/s"},
		},
	},
	{
		file:  "peers-concurrent.svg",
		title: "Concurrent callers on exchangetest",
		note:  higher,
		panels: []panel{
			{bench: "CallConcurrent/callers=1", unit: "req/s"},
			{bench: "CallConcurrent/callers=10", unit: "req/s"},
			{bench: "CallConcurrent/callers=50", unit: "req/s"},
			{bench: "CallConcurrent/callers=100", unit: "req/s"},
		},
	},
	{
		file:  "peers-latency.svg",
		title: "Sequential call latency on the echo server (CallEcho/callers=1)",
		note:  lower,
		panels: []panel{
			{title: "p50", bench: "CallEcho/callers=1", unit: "p50-µs", axis: "µs"},
			{title: "p90", bench: "CallEcho/callers=1", unit: "p90-µs", axis: "µs"},
			{title: "p99", bench: "CallEcho/callers=1", unit: "p99-µs", axis: "µs"},
			{title: "p99.9", bench: "CallEcho/callers=1", unit: "p99.9-µs", axis: "µs"},
		},
	},
	{
		file:  "peers-getlogs.svg",
		title: "eth_getLogs calls by number of logs in the result",
		note:  higher,
		panels: []panel{
			{bench: "GetLogsCall/logs=100", unit: "MB/s"},
			{bench: "GetLogsCall/logs=1000", unit: "MB/s"},
			{bench: "GetLogsCall/logs=5000", unit: "MB/s"},
		},
	},
	{
		file:  "peers-allocs.svg",
		title: "Allocations per message or call, the in-process server's included",
		note:  lower,
		panels: []panel{
			{bench: "Notify", unit: "allocs/op"},
			{bench: "CallEcho/callers=1", unit: "allocs/op"},
			{bench: "CallEcho/callers=100", unit: "allocs/op"},
			{bench: "Call/size=small", unit: "allocs/op"},
		},
	},
}
