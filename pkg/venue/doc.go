// Package venue says how each venue's servers behave beyond the wire
// format, after the venue's documentation: how they refuse a request over
// their rate limit, the login they check, the methods that change a
// session, and the market data they publish, made up by a seeded
// simulated market (Market, MarketBook) in each venue's own shapes (Feed).
// Each venue package registers its Exchange from init, beside its
// dialect (protocol.Register); pkg/exchangetest serves it to behave like
// the venue, for tests and the sidecar's demo, and the sidecar reads the
// session methods it must not forward.
//
// pkg/protocol is the wire alone; this package is the rest of what a
// venue is, so neither the client nor a venue's wire format depends on a
// simulated market.
package venue
