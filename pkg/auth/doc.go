// Package auth logs wsfan clients in to the exchanges: each helper is an
// on-connect hook, so the login runs on every connection before its
// subscriptions are restored.
//
//	key, err := auth.ParseThalexKey(keyID, pemBytes)
//	c, err := client.Dial(ctx, url, client.WithProtocol(protocol.Thalex()),
//		client.WithOnConnect(auth.Thalex(key)))
//
// Thalex signs a JWT (RS512, kid, iat) with the account's RSA key for
// public/login. Deribit authenticates with public/auth, by signature or
// client credentials, and keeps the token fresh on the connection for as
// long as it lasts. Ethereum nodes authenticate the handshake itself: pass
// Bearer's header to client.WithHeader.
//
// Each piece works alone too: ThalexKey.Token builds the JWT (REST takes
// it as a bearer token), DeribitKey.Sign computes the signature, and a
// hook called with a connected client logs in on its live connection.
//
// # Secrets
//
// Keys hold their secrets in unexported fields and format as their ids
// only, so a logged key or config shows no secret; no error from this
// package carries one. Read secrets from the environment or a file (see
// Secret), never from flags, which other users of the machine can read.
//
// # Goroutines
//
// Deribit's hook starts one goroutine per connection, with
// client.WhileConnected, to refresh the token before it expires; it ends
// with the connection, and Close waits for it.
package auth
