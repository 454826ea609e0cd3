// Package thalex speaks Thalex's WebSocket API, as its public
// documentation describes it (https://www.thalex.com/docs/, the
// "WebSocket API" and "Subscriptions" sections) and its Python SDK,
// thalex_py, uses it: JSON-RPC requests, responses without "jsonrpc", and
// channel notifications.
//
//	→ {"jsonrpc":"2.0","id":2,"method":"public/subscribe","params":{"channels":["ticker.BTC-PERPETUAL.raw"]}}
//	← {"id":2,"result":["ticker.BTC-PERPETUAL.raw"]}
//	← {"channel_name":"ticker.BTC-PERPETUAL.raw","notification":{...}}
//	← {"channel_name":"system","notification":{"event":"reconnect"}}
//
// It holds everything wsfan knows of Thalex: the client half (Protocol,
// for client.WithProtocol), the server half (Server, which the sidecar and
// pkg/exchangetest speak to their clients), and the login (Login, an
// on-connect hook signing a JWT with the account's RSA key). Importing the
// package registers the dialect as "thalex" with protocol.ByName.
//
// Where it follows the API specification (the file thalex_rust_sdk builds
// from, build_scripts/api.yaml, transcribed from thalex.com/docs):
// subscriptions are public/subscribe and private/subscribe, the latter for
// the "Private subscriptions" group (account.*, session.*, mm.rfqs,
// mm.rfq_quotes, user.inbox_notifications) after public/login on the same
// connection; unsubscribing is the one method unsubscribe, public and
// private channels mixed, answered with the channels it removed; the
// system channel carries notices such as {"event":"reconnect"} to its
// subscribers (WithNotices subscribes it on every connection); a request
// over the rate limit gets error 4, "throttle exceeded".
//
// What it assumes where the specification is silent: no cap on the
// channels of one request (none is documented); a top-level
// "snapshot":true marks a notification that is a whole state (the
// client's FlagSnapshot); a connection's requests are answered in order.
package thalex
