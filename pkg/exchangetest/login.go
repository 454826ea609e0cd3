package exchangetest

import "time"

// login is a connection's authentication. The zero value is logged out.
type login struct {
	ok      bool
	expires time.Time // zero: the login does not expire (Thalex)
}

// loggedIn reports whether c is logged in now. It runs on c's reader
// goroutine.
func (c *conn) loggedIn() bool {
	return c.login.ok && (c.login.expires.IsZero() || c.s.cfg.now().Before(c.login.expires))
}

// WithClock sets the clock the server checks logins and rate limits
// against: token ages, signature timestamps, access token expiry and the
// refill of request credits. Tests pass a fake clock's Now to simulate
// hours without sleeping. The default is time.Now.
func WithClock(now func() time.Time) Option {
	return func(c *config) {
		if now != nil {
			c.now = now
		}
	}
}

// WithClockSkew sets how far a signed login's time may be from the
// server's clock: a Thalex token's iat and a Deribit client_signature's
// timestamp. An older one is refused as expired, a later one as issued in
// the future. The default is 30s.
func WithClockSkew(d time.Duration) Option {
	return func(c *config) { c.skew = d }
}
