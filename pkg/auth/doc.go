// Package auth holds what the exchanges' logins share: reading a secret
// from the environment (Secret), the bearer header Ethereum node
// providers take on the handshake (Bearer), and marking a login the
// server refused (Refused) so the client serves public topics instead of
// retrying it.
//
// Each exchange's login lives with its wire, in its own package, as an
// on-connect hook that runs on every connection before its subscriptions
// are restored: thalex.Login (a JWT signed with the account's RSA key for
// public/login) and deribit.Login (public/auth by signature or client
// credentials, the token kept fresh while the connection lasts).
//
//	key, err := thalex.ParseKey(keyID, pemBytes)
//	c, err := client.Dial(ctx, url, client.WithProtocol(thalex.Protocol()),
//		client.WithOnConnect(thalex.Login(key)))
//
// # Secrets
//
// Keys hold their secrets in unexported fields and format as their ids
// only, so a logged key or config shows no secret; no error of a login
// carries one. Read secrets from the environment or a file (see Secret),
// never from flags, which other users of the machine can read.
package auth
