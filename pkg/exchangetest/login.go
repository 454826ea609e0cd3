package exchangetest

import (
	"time"

	"github.com/wsfan/wsfan/pkg/venue"
)

// login is a connection's authentication. The zero value is logged out.
type login struct {
	ok      bool
	expires time.Time // zero: the login lasts as long as the connection
}

// loggedIn reports whether c is logged in now. It runs on c's reader
// goroutine.
func (c *conn) loggedIn() bool {
	return c.login.ok && (c.login.expires.IsZero() || c.s.cfg.now().Before(c.login.expires))
}

// WithClock sets the clock the server checks logins and rate limits
// against (the now a login's Authenticate gets): token ages, signature
// timestamps, access token expiry and the refill of request credits. Tests pass a fake clock's Now to simulate
// hours without sleeping. The default is time.Now.
func WithClock(now func() time.Time) Option {
	return func(c *config) {
		if now != nil {
			c.now = now
		}
	}
}

// WithLogin makes the server check logins with a, the server half of the
// exchange's login with the credentials a test registers, such as
// thalex.NewServerLogin(thalex.ServerKey{...}) or
// deribit.NewServerLogin(clientID, secret). A private channel needs a
// login on its connection. The default is the exchange's login accepting
// any credentials (venue.Exchange.Login).
func WithLogin(a venue.Authenticator) Option {
	return func(c *config) { c.login = a }
}
