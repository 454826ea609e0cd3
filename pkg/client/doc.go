// Package client is wsfan's SDK for streaming JSON APIs over WebSocket:
// crypto-exchange feeds (Thalex, Deribit, Ethereal, OKX) and Ethereum
// nodes. Each venue's wire is a package of its own (pkg/thalex,
// pkg/deribit, pkg/ethereal, pkg/okx, pkg/ethereum) whose Protocol is
// given to Dial with WithProtocol, and whose Login, where it has one, is
// an on-connect hook (WithOnConnect).
//
// A Client keeps one connection up for as long as the user wants it. It
// correlates RPC calls by id, routes subscription frames to buffered Go
// channels, and after a reconnect restores every subscription in one
// batched write from payloads encoded once.
//
//	c, err := client.Dial(ctx, "wss://thalex.com/ws/api/v2", client.WithProtocol(thalex.Protocol()))
//	defer c.Close()
//	sub, err := c.Subscribe(ctx, []string{"ticker.BTC-PERPETUAL.raw"}, client.Buffer(64))
//	for m, err := range sub.All() { ... client.Decode[Ticker](m) ... }
//
// # Goroutines
//
// Every goroutine the package starts, each counted in the client's wait
// group (Close waits for them) unless said otherwise:
//
//   - the supervisor (reconnect.go), one per client: dials, restores and
//     replaces lost connections; the on-connect hook runs on it, before
//     the connection is handed out, and so does a switch-back's handover
//     (handover.go), and the move of SetEndpoints, which it owns the
//     endpoint list for (setendpoints.go);
//   - the reader and the writer (conn.go), one each per connection,
//     counted in the connection's wait group, ending with it;
//   - a subscription's mover (Subscription.moveLoop), while messages wait
//     beside its full channel; it ends when none does, or with the
//     subscription (not counted: it holds nothing of the client);
//   - a topic's refresh (subscribe.go, refreshLoop), while a topic the
//     venue expires is subscribed again;
//   - an unsubscribe off the reader: a subscription its overflow policy
//     ended (detachAsync, unsubscribe.go), or whose topics the server
//     ended (serverend.go);
//   - WhileConnected's user task, with one more that ends the task's
//     context when its connection ends.
//
// The recovery of a node's topics (internal/recovery, plugged in at
// Dial: recovery.go) starts none: it runs on the reader, which hands it
// each message of a Backfill topic (held while a backfill runs), and on
// the supervisor, which has it hold those topics before a restore and
// fetch and deliver what they missed after, before the connection is
// handed out; a Subscribe of an Ethereum logs filter asks it for the
// topic's starting place on the caller's goroutine.
//
// User code never runs on the reader, the writer or the supervisor (but
// the on-connect hook). Composites built on the core start their own
// (pkg/pool: an event relay per connection and a forwarder per part of a
// spanning subscription; pkg/standby: an event relay per leg, the legs'
// switch-back loop, a rejoin hold's timer); a standby's merge runs on its
// legs' readers.
//
// # Invariants
//
//   - The reader never waits for a consumer (except under Block, chosen
//     explicitly): a full buffer gets a few yields of the processor, then
//     lends room beyond Buffer for the subscription's Grace (20 ms by
//     default, once per slow-consumer episode), then the overflow policy.
//   - Only the writer goroutine writes messages to the socket; frames
//     queued together go out in one write(2).
//   - A request id is registered before its request is queued; exactly
//     one of the reader, the caller (context done) or the connection's
//     failure removes it.
//   - Every subscribe and unsubscribe frame is queued under Client.mu, by
//     whoever changed the topic table, so the server sees them in the
//     order the table changed.
//   - A topic is restored on reconnect once the server acknowledged it;
//     a topic refused on restore ends its subscriptions with an error.
//   - Message.Data is never written after delivery: it is carved from a
//     read slab that is never reused. Message.Decode copies strings, so
//     decoded values never keep a slab alive.
package client
