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
// subscribers (WithNotices subscribes it on every connection); book
// channels are book.<instrument>.<grouping>.<nlevels>.<delay>, the
// grouping none or a USD value aligned to the price tick, which may
// therefore hold a decimal point, such as 0.5 (see BookRules). A top-level
// "snapshot": true marks a notification that carries a whole state (the
// client's FlagSnapshot): the specification (the OpenAPI "Thalex API
// Description" rendered at thalex.com/docs) says the flag appears only
// when true and only on stateful feeds, those that send an initial state
// and then updates; its absence therefore means an update.
//
// Rate limits: Thalex publishes no numbers, neither per request nor per
// connection, so the package sets none of its own. The one figure the
// specification shows is the answer of private/set_cancel_on_disconnect,
// {"message_rate": N}, and what N counts is not documented. A request
// refused for its pace gets error 4 (thalex_py's ERROR_CODE_THROTTLE),
// which the client takes as throttling and sends again later; so does
// error 3, "too many pending requests", a code only a third-party SDK
// names (see Throttled in protocol.go for the sources).
//
// Cancel on disconnect: private/set_cancel_on_disconnect with
// {"timeout_secs": N} makes the session non-persistent, its orders
// cancelled when the connection is deemed dead, and that happens when
// nothing arrives from the session for N seconds. The specification says
// a WebSocket ping is enough to keep it alive, so a program using it
// needs the client's pings (client.WithPing, every second by default) at
// an interval below N: thalex_py pings every 5 seconds (the websockets
// library's ping_interval=5), and its examples ask for timeout_secs of 5
// to 6.
//
// What it assumes where the specification is silent: no cap on the
// channels of one request (none is documented); a connection's requests
// are answered in order.
package thalex
