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
// gaps. public/set_heartbeat takes no interval under 10s (MinHeartbeat,
// checked at Dial). A request over the rate limit gets error 10028,
// "too_many_requests" ("Rate Limits").
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
