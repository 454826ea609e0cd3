// Package exchangetest runs a real WebSocket server on 127.0.0.1 that speaks
// any registered dialect, the way net/http/httptest runs an HTTP server: for
// tests, benchmarks, examples and the sidecar's demo mode. It holds nothing
// of any exchange: it speaks through the exchange package's server half and
// behaves as its venue.Exchange says (login, refusals, response stamps,
// feed, public methods), so importing the exchange package is what makes a
// dialect available.
//
//	srv := exchangetest.NewServer(thalex.Name)
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
// It checks logins the way the exchanges do when given the exchange's
// server login with credentials (WithLogin: thalex.NewServerLogin with a
// registered public key, deribit.NewServerLogin with client credentials,
// expiring access tokens and refresh tokens, okx.NewServerLogin with an
// API key, its secret and passphrase), and a bearer token on the
// handshake (WithBearerToken). Private channels are refused to a
// connection that is not logged in (OKX: 60011 "Please log in."). WithRateLimit refuses requests over a
// per-connection budget with each exchange's own error, and WithClock
// runs logins and limits on a test's fake clock. StartFeed publishes the
// exchange's made-up market data.
//
// # What each exchange's server offers
//
// StartFeed publishes, every Interval (100ms by default), on these topics
// (FeedTopicsOf lists them; other instruments with FeedOptions), and the
// server answers these public methods itself (more with Handle):
//
//	thalex    ticker.BTC-PERPETUAL.raw  book.BTC-PERPETUAL.none.10.100ms (and ETH-PERPETUAL)
//	          public/instruments  public/system_info  private/set_cancel_on_disconnect
//	deribit   ticker.BTC-PERPETUAL.100ms  book.BTC-PERPETUAL.100ms (and ETH-PERPETUAL)
//	          public/get_instruments  public/get_time  public/test
//	          private/enable_cancel_on_disconnect  private/disable_cancel_on_disconnect
//	ethereum  newHeads
//	          eth_blockNumber (the last head's number)  eth_chainId
//	ethereal  Ticker:BTCUSD       L2Book:BTCUSD (and ETHUSD)
//	          (Ethereal answers no calls)
//	okx       tickers:BTC-USDT  trades:BTC-USDT  books:BTC-USDT (and ETH-USDT)
//	          (OKX's ops other than subscribe, unsubscribe and login answer
//	          only what Handle registers; books chain by seqId)
//	kraken    ticker:BTC/USD  trade:BTC/USD  book:BTC/USD:10 (and ETH/USD)
//	          ping (answered pong; other methods only what Handle
//	          registers; books carry their CRC32 checksum)
//
// Every dialect also answers subscribe and unsubscribe (and the login of
// WithLogin); a topic outside the feed is acknowledged too, and gets what
// Publish sends it.
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
//     every subscriber (per connection only where the server assigns
//     subscription ids, which differ per connection: Ethereum). It blocks while a subscriber's queue is
//     full, so benchmarks measure the client, not the server's memory.
//   - Close stops every goroutine the server started.//
//
// It is the one test-helper package the product imports, by design: the
// sidecar's demo mode (-demo) and cmd/replay serve a test exchange. A
// repository test (imports_test.go) fails when any other package of
// pkg/ or cmd/ imports a test helper (testutil, logintest, sidecartest,
// protocoltest) from a non-test file.
package exchangetest
