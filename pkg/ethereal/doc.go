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
// The account streams (OrderFill, OrderUpdate, PositionUpdate,
// SubaccountLiquidation, TokenTransfer) route by the subaccount id their
// events carry: data.sid, or the sid of data.d's items, as the public
// SDK's schemas put it (data.subaccountId otherwise); the others by
// data.s.
//
// What it assumes, not checked against the live documentation in this
// session (the reference material held no copy of it or of the SDK's
// schemas): the sid placement above, taken from the issue that asked for
// it; nothing answers a successful subscribe; an {"ok":false} refusal
// (SUBSCRIPTION_LIMIT_EXCEEDED) is not yet read; no batches, one frame a
// topic.
package ethereal
