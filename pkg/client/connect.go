package client

import (
	"context"
	"fmt"
	"net/url"

	"github.com/wsfan/wsfan/internal/connpace"
)

// paceConnect waits until the venue's pace of new connections
// (protocol.ConnectMethod: OKX's 3 a second) lets one more go to the
// host of rawURL, shared with every Client, Pool and Standby of the
// process dialling that host (internal/connpace); other processes are not
// counted. It runs before the dial timeout starts, so a connection queued
// behind others (a Pool's, or every connection reconnecting after one
// notice) does not time out while it waits; ctx ends the wait.
func (c *Client) paceConnect(ctx context.Context, rawURL string) error {
	if len(c.cfg.connectLimits) == 0 {
		return nil
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil // Dial checked it: the dial reports it
	}
	for _, l := range c.cfg.connectLimits {
		if err := connpace.Wait(ctx, u.Host, l); err != nil {
			return fmt.Errorf("waiting for the venue's pace of new connections: %w", ctxError(ctx, "connection pace"))
		}
	}
	return nil
}
