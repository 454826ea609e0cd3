// Package ethereal speaks Ethereal's WebSocket subscription stream, as its
// public documentation describes it (https://docs.ethereal.trade/,
// "WebSocket" and "Subscriptions") and its Python SDK, ethereal-sdk, uses
// it:
//
//	→ {"event":"subscribe","data":{"type":"L2Book","symbol":"BTCUSD"}}
//	← {"e":"L2Book","t":1737043200123,"data":{...}}
//
// Ethereal has no request ids. Each subscribe and unsubscribe is answered
// by a status frame, {"ok":true} or {"ok":false,"code":CODE}; the client
// takes a status as the answer to the oldest event still waiting (a
// connection's events are answered in order), so a refusal such as
// SUBSCRIPTION_LIMIT_EXCEEDED fails the Subscribe that caused it with a
// *client.RefusedError naming the topic and the code, and a restore the
// service refuses in part ends only the refused topics' subscriptions.
// The package holds the client half (Protocol) and the server half
// (Server). Importing the package registers the dialect as "ethereal" with
// protocol.ByName. L2Book topics carry t and pt (the previous update's t),
// which the client checks for gaps; the first names no previous update, a
// whole book (the client's FlagSnapshot).
//
// The account streams (OrderFill, OrderUpdate, PositionUpdate,
// SubaccountLiquidation, TokenTransfer) route by the subaccount id their
// events carry: data.sid, or the sid of data.d's first item (data.subaccountId
// otherwise); the others by data.s.
//
// Sources, and what they leave open. The stream's URL, event names,
// subscribe frames and the L2Book, PositionUpdate, OrderFill,
// SubaccountLiquidation and TokenTransfer schemas are Ethereal's
// (docs.ethereal.trade, "WebSocket"; the message schemas its OpenAPI
// tooling publishes, as the third-party Rust SDK 8ball030/ethereal_rust_sdk
// carries them in ws_messages.json). The status frame's shape comes from a
// third-party Go SDK only (qiwi1272/ethereal-go, pb/ethereal.pb.go,
// WebsocketStatus); no source says whether a success is answered. The
// client assumes it is (a status answers the oldest event waiting, and an
// event given up on keeps its place for its late answer) until a request
// goes unanswered for AcceptAfter (2 s): then it is taken as accepted,
// and the client knows the service answers only refusals, so a refusal
// while several events wait fails them all, saying it cannot tell which
// (protocol.QuietlyAccepting).
// Request limits: the points a /v1/stream request costs are published at
// run time (GET /v1/rate-limit/config, Ws2FixedRateLimitEndpointDto), the
// budget nowhere, so the client keeps no Ethereal pace by default
// (client.WithRateLimit sets one); the per-connection subscription limit's
// number is not published either. No batches: one frame a topic, written
// in one flush.
package ethereal
