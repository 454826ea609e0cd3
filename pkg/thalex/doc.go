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
// Channels under account. and session. are private: they are subscribed
// with private/subscribe after public/login on the same connection.
package thalex
