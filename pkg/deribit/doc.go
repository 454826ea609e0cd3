// Package deribit speaks Deribit's JSON-RPC v2 API over WebSocket, as its
// public documentation describes it (https://docs.deribit.com/: "JSON-RPC",
// "Subscriptions", "Authentication", "public/set_heartbeat"):
//
//	→ {"jsonrpc":"2.0","id":3600,"method":"public/subscribe","params":{"channels":["book.BTC-PERPETUAL.100ms"]}}
//	← {"jsonrpc":"2.0","id":3600,"result":["book.BTC-PERPETUAL.100ms"],"usIn":…,"usOut":…,"usDiff":…,"testnet":…}
//	← {"jsonrpc":"2.0","method":"subscription","params":{"channel":"book.BTC-PERPETUAL.100ms","data":{...}}}
//	← {"jsonrpc":"2.0","method":"heartbeat","params":{"type":"test_request"}}
//
// It holds everything wsfan knows of Deribit: the client half (Protocol,
// which asks for heartbeats and answers them), the server half (Server and
// AppendResult, Deribit's response stamps), and the login (Login, an
// on-connect hook that authenticates with public/auth and keeps the token
// fresh). Importing the package registers the dialect as "deribit" with
// protocol.ByName.
//
// Deribit takes no JSON-RPC batch arrays. Channels under user. are
// private: they are subscribed with private/subscribe after public/auth.
// book.* channels send a snapshot (type "snapshot", no prev_change_id),
// then changes chained by prev_change_id, which the client checks for
// gaps. Grouped books (book.<instrument>.<group>.<depth>.<interval>) are
// whole at every notification. public/set_heartbeat takes no interval
// under 10s (MinHeartbeat, checked at Dial).
//
// # Limits and sessions
//
// A request that finds no credits gets error 10028 "too_many_requests",
// and Deribit ends the session ("Rate Limits"): the client reconnects
// only after ThrottleRefill, then restores its topics within the
// subscription budget it keeps by default (SubscribeLimit), in rounds
// when they need more requests than the budget holds at once. 10066
// "too_many_concurrent_requests" is throttling too. Once Deribit asks for
// heartbeats, a program's calls leave the credits of a public/test reply
// in any budget that charges it (client.HeartbeatReplyMethod).
// Cancel-on-disconnect (private/enable_cancel_on_disconnect) belongs to
// the connection unless its scope is "account": the client enables it
// again on every new connection before handing it out. A pool.Pool
// opens at most ConnectionsPerIP (32) connections.
//
// What it assumes where the documentation is silent: a request frame too
// large is answered with an error that has no id (reported by users near
// 32 KiB); every subscribe keeps to MaxChannels (250, the users' fix) and
// MaxFrameBytes (30 KiB); a connection's requests are answered in order,
// so an error without an id answers the oldest request waiting.
//
// # Goroutines
//
// Login's hook starts one goroutine per connection, with
// client.WhileConnected, to refresh the token before it expires; it ends
// with the connection, and the client's Close waits for it.
package deribit
