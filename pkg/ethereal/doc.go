// Package ethereal speaks Ethereal's WebSocket subscription stream, as its
// public documentation describes it
// (https://docs.ethereal.trade/developer-guides/trading-api/websockets)
// and its Python SDK, ethereal-sdk, uses it:
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
// protocol.ByName.
//
// L2Book topics carry data.t and, optionally, data.pt (the previous
// message's t), which the client checks for gaps. The first message after
// a subscribe is the whole book, up to 100 levels a side (the client's
// FlagSnapshot); every later one is a diff with absolute quantities, with
// or without a pt: a message without pt after the first is taken as a
// diff that follows the last one, never as a whole book (Protocol's
// Sequence). The price stream is Ticker (TICKER, once a second); the
// MarketPrice and BookDepth names belong to the deprecated Socket.io
// stream.
//
// The account streams (OrderFill, OrderUpdate, PositionUpdate,
// SubaccountLiquidation, TokenTransfer) route by the subaccount id their
// events carry: data.sid, or the sid of data.d's first item (data.subaccountId
// otherwise); the others by data.s.
//
// Sources, and what they leave open. The stream's URL, event names,
// subscribe frames, the L2Book and Ticker events and the refusal
// {ok: false, code: "SUBSCRIPTION_LIMIT_EXCEEDED"} are on Ethereal's
// WebSocket page (above); the PositionUpdate, OrderFill,
// SubaccountLiquidation and TokenTransfer schemas are the message
// schemas its OpenAPI tooling publishes, as the third-party Rust SDK
// 8ball030/ethereal_rust_sdk carries them in ws_messages.json. Ticker's
// field list was cut off in every copy of the page we could read: its
// event name and server time are documented, its data's fields are
// modelled (see the test exchange's feed). The page shows the refusal,
// not a success: {"ok":true} is the same frame's shape with ok true, and
// no source says whether a success is answered at all. The client
// assumes it is (a status answers the oldest event waiting, and an event
// given up on keeps its place for its late answer) until a request goes
// unanswered for AcceptAfter (2 s): then it is taken as accepted, and the
// client knows the service answers only refusals, so a refusal while
// several events wait fails them all, saying it cannot tell which
// (protocol.Venue.AcceptAfter).
//
// Limits. Subscriptions: per connection, each (subaccountId, streamType)
// pair of an account stream counts as one; market-data channels (L2Book,
// Ticker, TradeFill) are not subject to the limit (WebSocket page); the
// limit's number is not stated in what we could read. Requests: Ethereal's
// system-limits page
// (https://docs.ethereal.trade/developer-guides/trading-api/system-limits)
// gives WebSocket streams 3,500 points per 5 minutes per IP, spent only
// when a connection is established and when a subscription is made. The
// points each of those costs are in a table of that page we could not
// retrieve (the API is also said to publish them at run time, GET
// /v1/rate-limit/config, Ws2FixedRateLimitEndpointDto). The client keeps
// SubscribeLimit by default, which assumes 1 point a subscribe request;
// client.WithRateLimit replaces it. No batches: one frame a topic, written
// in one flush.
package ethereal
