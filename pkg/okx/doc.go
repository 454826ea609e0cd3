// Package okx speaks OKX's v5 WebSocket API
// (https://www.okx.com/docs-v5/en/#overview-websocket): its public
// market data (tickers, trades, order books) and, after a login, its
// private channels. Importing it registers the dialect "okx" with
// pkg/protocol (both halves), its test exchange with pkg/venue and its
// order books with pkg/book:
//
//	import _ "github.com/wsfan/wsfan/pkg/okx"
//
// A topic is one subscription argument, CHANNEL:INSTID ("books:BTC-USDT")
// or CHANNEL:KEY=VALUE,… (topic.go). What the venue documents and this
// package keeps:
//
//   - A subscribe carries as many arguments as one frame may (64 KB), and
//     OKX acknowledges each in a frame of its own echoing the request's id
//     (protocol.TopicAcking): a restore stays one write and one request.
//   - The client sends the text "ping" every 15 s and reads "pong"
//     (protocol.Venue.Keepalive); OKX closes a connection silent for 30 s.
//   - Subscribe, unsubscribe and login requests are paced to 480 an hour
//     a connection (RequestLimit); 60014 "Requests too frequent" is a
//     throttle, retried once the pace allows.
//   - The books chain by seqId and prevSeqId (book.go): a gap is a break
//     resynced once, -1 marks a snapshot, seqId 0 is a number like any
//     other, a reset after maintenance is followed, and the deprecated
//     checksum (always 0) is never checked.
//   - New connections to an OKX host are paced for the whole process,
//     one at a time at 2.5 a second (ConnectLimit: OKX allows 3 a second
//     an IP), first dials and reconnects alike; other processes are not
//     counted.
//   - Each topic names the URL path of the service that serves it
//     (PublicPath, PrivatePath, BusinessPath: candlesticks, trades-all,
//     algo and grid orders, block trading, deposit and withdrawal
//     information are on /ws/v5/business since June 2023): the client
//     refuses one on another of the three, naming the URL to use.
//   - Private channels, and the login-only books books-l2-tbt and
//     books50-l2-tbt, are refused before they are sent on a client
//     without an on-connect hook (Login), and go in subscribe requests
//     of their own, so a refusal that names no argument (60011, a tier's
//     64003) refuses only them. A 60018 is matched to its topic however
//     OKX spaces its argument.
//   - A notice of a service upgrade (64008) reconnects at once.
//   - Login (op "login", HMAC-SHA256 of timestamp + "GET" +
//     "/users/self/verify") runs on every connection before its
//     subscriptions are restored, so private channels come back after a
//     reconnect (Login).
//
// Sources: OKX's API documentation (overview: connect, login, subscribe,
// unsubscribe, notification; the tickers, trades and order book channels;
// the WebSocket error codes), as published in July 2026; OKX's notice
// "Changes to V5 API WebSocket subscription parameter and URL" (24 April
// 2023) and its announcement of the L2 tick-by-tick books' tiers (14
// April 2022).
package okx
