// Package kraken speaks Kraken's Spot WebSocket v2
// (wss://ws.kraken.com/v2; https://docs.kraken.com/api/docs/websocket-v2/):
// its public channels (book, ticker, trade, ohlc, instrument) and the
// shapes of its private ones (executions, balances) and order methods.
// Importing it registers the dialect "kraken" with pkg/protocol (both
// halves), its test exchange with pkg/venue and its order books with
// pkg/book:
//
//	import _ "github.com/wsfan/wsfan/pkg/kraken"
//
// A topic is CHANNEL:SYMBOL[:N] ("book:BTC/USD:10", "ohlc:BTC/USD:1") or
// a channel of no symbol ("instrument"), topic.go. What the venue
// documents and this package keeps:
//
//   - A subscribe carries the symbols of one channel (and depth or
//     interval), each acknowledged in a frame of its own echoing the
//     req_id (protocol.Venue.TopicAcks); a refusal names its symbol.
//   - Messages route by channel and their first data item's symbol; a
//     book's depth is not in its messages, so one connection holds one
//     depth of a symbol's book, as Kraken allows.
//   - The heartbeat channel and the status message are events; the
//     client pings with {"method":"ping"} (protocol.Venue.Keepalive).
//   - Books are verified by their CRC32 checksum on every message, at
//     the precision their numbers' texts carry, and truncated to the
//     subscribed depth after each (book.go): a mismatch breaks the book
//     and a resync's snapshot is awaited. Timestamps (RFC 3339) are the
//     book's exchange time, and a message's venue stamp (Frame.Time,
//     read by one reader in the scan routing already makes: stamp.go).
//   - Private channels (executions, balances) and trading methods
//     (add_order, cancel_order, …) carry a token in their params:
//     Login fetches one from the REST method GetWebSocketsToken for
//     every connection (login.go), and the dialect puts the connection's
//     token in every private subscribe and call that names none. No call
//     is made again on a new connection: an order whose connection is
//     lost before its answer fails with client.ErrConnectionLost.
//   - The dead man's switch, cancel_all_orders_after, is armed with
//     ArmDeadMansSwitch, refreshed every third of its timeout on every
//     connection, made again on each new one, holds the connection
//     while armed, and is disarmed with DisarmDeadMansSwitch
//     (deadman.go).
//   - A book resubscribed again and again (its checksum failing on each
//     fresh snapshot) waits 1 s, doubling to 30 s, between resyncs
//     (protocol.Venue.Resync).
//   - New connections to a host are paced under Cloudflare's 150 an IP
//     every 10 minutes (ConnectLimit, limits.go).
//
// A book's precision is read from its own numbers' texts, not from the
// instrument channel: Kraken writes every price and qty "containing full
// precision", so each text shows its pair's price_precision or
// qty_precision, and a book needs no second subscription (nor waits for
// one) to verify its first message. A precision raised under a book is
// read from the texts that follow it; one lowered fails the checksum (the
// higher is kept until a snapshot), and the resync's snapshot starts
// over at the new one.
//
// Sources: Kraken's API documentation as published in 2026: the Spot
// WebSocket v2 pages (book, ticker, trade, ohlc, instrument, heartbeat,
// ping, add_order, cancel_order, cancel_all_orders_after, executions),
// the guide "Book checksum (WebSocket v2)", and the REST pages
// GetWebSocketsToken and "Spot REST Authentication".
package kraken
