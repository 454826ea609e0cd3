package auth

import (
	"errors"
	"fmt"

	"github.com/wsfan/wsfan/pkg/client"
)

// Refused marks the server's answer to a login (an *client.RPCError) as
// client.ErrLoginRefused, so that on a reconnect the client serves the
// public topics instead of retrying a login that would be refused again.
// Other errors (a lost connection, a timeout) pass unchanged: they are
// worth retrying. The exchanges' login hooks (thalex.Login,
// deribit.Login) return their errors through it.
func Refused(err error) error {
	var rpcErr *client.RPCError
	if errors.As(err, &rpcErr) {
		return fmt.Errorf("%w: %w", client.ErrLoginRefused, err)
	}
	return err
}
