// Package ethereal speaks Ethereal's WebSocket subscription stream, as its
// public documentation describes it (https://docs.ethereal.trade/,
// "WebSocket" and "Subscriptions") and its Python SDK, ethereal-sdk, uses
// it:
//
//	→ {"event":"subscribe","data":{"type":"L2Book","symbol":"BTCUSD"}}
//	← {"e":"L2Book","t":1737043200123,"data":{...}}
//
// Ethereal acknowledges nothing and has no request ids. It holds the
// client half (Protocol) and the server half (Server). Importing the
// package registers the dialect as "ethereal" with protocol.ByName.
// L2Book topics carry t and pt (the previous update's t), which the
// client checks for gaps; the first names no previous update, a whole
// book (the client's FlagSnapshot).
//
// What it assumes, not re-checked against the live documentation in this
// session: account streams route by data.subaccountId; nothing answers a
// subscribe, so a refusal is not seen; no batches, one frame a topic.
package ethereal
