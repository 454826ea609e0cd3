// Package sidecar holds one upstream connection (a pkg/client Client) and
// fans it out to many local programs that speak the same wire dialect, over
// WebSocket, or to curl and browsers over Server-Sent Events.
//
//	srv, err := sidecar.New(sidecar.Config{
//		Upstream: "wss://thalex.com/ws/api/v2",
//		Protocol: "thalex",
//		Listen:   "127.0.0.1:8765",
//	})
//	if err != nil { ... }
//	err = srv.ListenAndServe(ctx) // drains local clients when ctx ends
//
// A local program changes only its URL: subscribe and unsubscribe requests
// are answered the way the real server answers them, other RPC calls are
// forwarded upstream with the request id remapped, and notifications arrive
// in the dialect's own frames.
//
// # Endpoints
//
//	/ and /ws          WebSocket, the upstream dialect
//	/v1/stream?topic=  Server-Sent Events (repeat topic for several): default
//	                   message events with ids, resumable with Last-Event-ID;
//	                   &event=topic names each event after its topic
//	/                  the status page (a browser), live from /v1/status/stream
//	/v1/book?topic=    JSON: the book the sidecar keeps of a book topic (or
//	                   ?instrument=), exact decimal strings, &depth= levels
//	/v1/book/stream?topic=  the same as SSE, at most &hz= books a second
//	/v1/status         JSON: upstream state, topics, local clients
//	/v1/status/stream  the same as SSE message events, once a second
//	/metrics           Prometheus, wsfan_sidecar_* and the upstream's wsfan_client_*
//	/healthz           200 while the process serves
//	/readyz            200 while the upstream is connected and not every
//	                   topic is silent, else 503 saying why
//
// # Upstream failures
//
// A dead or black-holed upstream is noticed within UpstreamPing +
// UpstreamPingTimeout (4s by default), and so is one whose pongs lag more
// than the timeout behind its data; the lag is in /v1/status
// (lag_seconds) and wsfan_client_lag_seconds{connection="upstream"}. The
// upstream client then redials at once and at most UpstreamReconnectMax
// apart (2s), and resubscribes every topic in one batch; local clients
// keep their connections. While it is down, a forwarded call fails at
// once with the last failure in its error (it is never held and sent
// late), and a subscribe is accepted at once and subscribed when the
// upstream is back.
//
// Every hole is told. /v1/status counts reconnects per topic and for the
// upstream (with the time of the last one), and
// wsfan_sidecar_upstream_resumes_total counts them. On SSE streams the
// first message of a topic after a reconnect is marked
// "reconnected":true (with named events, a "wsfan.reconnected" event
// goes first), and one after a gap upstream is preceded by a gap mark. A
// WebSocket client that asks (the handshake header Wsfan-Notify: gaps, or
// ?notify=gaps; pkg/client asks by itself) gets a wsfan/gap notice before
// such a message, naming the topic and the cause (protocol.GapNotice);
// the SDK turns it into the flag it would have seen directly. In a NATS
// group a hole is also told when it starts (holestart.go: the "down"
// notice, the member's NATS link lost or the group's upstream down). A
// client that does not ask gets the exchange's frames and nothing else,
// so a program written for the real server is unaffected. A topic silent far
// beyond its usual interval while others flow is marked stale in
// /v1/status and resubscribed (client.WithStaleAfter).
//
// # Invariants
//
//   - One upstream subscription per topic, reference-counted by local
//     subscribers; the last one leaving starts a grace timer, and only its
//     expiry unsubscribes upstream.
//   - Each topic has one goroutine, started by the hub: it subscribes
//     upstream, then pumps, the only reader of the upstream subscription.
//     It encodes every message once (a complete WebSocket frame, header
//     included, and an SSE event when SSE clients listen; for clients that
//     asked for stamps, all but the send stamp, which each client's
//     writer appends as it writes: stamps.go) and queues the same bytes to
//     every local subscriber without blocking.
//   - Each local client has a queue bounded in bytes. When it is full the
//     client is disconnected with a close reason (client.CloseSubscription, the
//     default) or the frame is dropped and counted (client.DropNewest). For every
//     client, frames offered = delivered + dropped, exactly.
//   - A session is one local client, whatever its transport: its topics
//     and its queue are written once; a transport (WebSocket, SSE) only
//     writes the queue out, and is woken when the queue was empty.
//   - Each WebSocket client has one reader goroutine, started by the HTTP
//     handler, which returns so net/http's connection state is freed, and
//     at most one writer goroutine, which runs only while frames are queued
//     (an idle client holds one shallow goroutine and a few KiB). Only the
//     writer writes to the connection, and it writes every queued frame in
//     one writev(2). gorilla writes only when it rejects a malformed frame,
//     and then whole frames only.
//   - A subscribe is acknowledged before the first notification of that
//     topic is queued to the client, and a notification published after
//     the client read the acknowledgement reaches it.
//   - Order holds per topic. Two topics have two pumps, so frames of
//     different topics may reach a local client in another order than the
//     upstream sent them.
package sidecar
