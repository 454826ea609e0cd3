package client

import "github.com/wsfan/wsfan/pkg/protocol"

// The core holds one venue value (Client.venue, read by Dial from
// protocol.Protocol.Venue): the numbers it keeps and the behaviour
// families it asks. These read the families where a venue has none.

// classifyError is what the venue says the error of code and message
// means: the zero class, an error handed to the caller as it is, where
// the venue classifies none.
func (c *Client) classifyError(code int, message string) protocol.ErrorClass {
	if c.venue.Errors == nil {
		return protocol.ErrorClass{}
	}
	return c.venue.Errors.ClassifyError(code, message)
}

// classifyMethod is what the venue says a call of method with params
// (nil: unknown) is: the zero class, a call made once on its
// connection, where the venue classifies none.
func (c *Client) classifyMethod(method string, params []byte) protocol.MethodClass {
	if c.venue.Methods == nil {
		return protocol.MethodClass{}
	}
	return c.venue.Methods.ClassifyMethod(method, params)
}
