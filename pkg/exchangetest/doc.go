// Package exchangetest runs a real WebSocket server on 127.0.0.1 that speaks
// every wsfan dialect (Thalex, Deribit, Ethereum eth_subscribe, Ethereal), the
// way net/http/httptest runs an HTTP server: for tests, benchmarks, examples
// and the sidecar's demo mode.
//
//	srv := exchangetest.NewServer(exchangetest.Thalex)
//	defer srv.Close()
//	// dial srv.URL(), subscribe, then:
//	srv.WaitSubscribers(ctx, "ticker.BTC-PERPETUAL.raw", 1)
//	srv.Publish("ticker.BTC-PERPETUAL.raw", []byte(`{"mark_price":65000}`))
//
// The server answers subscribe requests with the dialect's acknowledgement,
// records every frame it receives (Received, CountReceived, WaitReceived),
// dispatches other RPC methods to handlers registered with Handle, and has
// knobs to inject faults: refused topics, slow responses, missing pongs, a
// silent peer, dropped connections, a killed and restarted server.
//
// It checks logins the way the exchanges do when told the credentials:
// Thalex JWTs against a registered public key (WithThalexKey), Deribit
// client credentials and signatures (WithCredentials) with expiring access
// tokens and refresh tokens (WithTokenExpiry, RevokeTokens), a bearer
// token on the handshake (WithBearerToken). Private channels are refused
// to a connection that is not logged in. WithRateLimit refuses requests
// over a per-connection budget with each dialect's own error, and
// WithClock runs logins and limits on a test's fake clock.
//
// # Invariants
//
//   - Every connection has exactly one reader goroutine (the HTTP handler that
//     upgraded it) and one writer goroutine; only the writer calls the
//     gorilla write methods other than WriteControl (which gorilla allows
//     concurrently), so a connection is never written from two goroutines.
//   - Request handling (subscribe, login, handlers) runs on the connection's
//     reader goroutine, in the order the frames arrived.
//   - A subscription acknowledged with a response is registered by the writer
//     just before it writes that response, so a client never receives a
//     notification for a subscription before its acknowledgement.
//   - Publish encodes a notification frame once and queues the same bytes to
//     every subscriber (per connection only for Ethereum, whose subscription
//     ids differ per connection). It blocks while a subscriber's queue is
//     full, so benchmarks measure the client, not the server's memory.
//   - Close stops every goroutine the server started.
package exchangetest
