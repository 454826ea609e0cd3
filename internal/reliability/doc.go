// Package reliability holds the fault tests of the SDK and the sidecar
// under a real fault proxy (Toxiproxy, through internal/faultproxy), and
// the run that measures them for docs/reliability.md. It has no code of
// its own beside its tests.
//
// Each scenario puts Toxiproxy between a program's SDK client and the
// test exchange (Deribit dialect), directly or with a sidecar in between
// (the proxy then sits between the sidecar and the exchange), publishes
// numbered messages on 7 topics at about 350 messages a second, makes a
// call every 250 ms, applies one fault for a while, heals it, and
// reports: when the fault was noticed, when data flowed again after the
// heal, the messages lost, the holes left unmarked (a message after a
// hole without FlagReconnected, FlagGap or FlagStale), the calls failed
// and how fast, and the calls the exchange received after their caller
// had given up.
//
//	go test ./internal/reliability/                                      # the behaviour, with fast settings
//	WSFAN_RELIABILITY=1 go test -run Table -v -timeout 20m ./internal/reliability/  # the table, with default settings
package reliability
