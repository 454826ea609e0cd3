package thalex

import (
	"github.com/wsfan/wsfan/pkg/protocol"
)

// A notification up to its channel, and between the channel and the
// payload.
const (
	notificationHead = `{"channel_name":`
	notificationMid  = `,"notification":`
)

// server writes responses without "jsonrpc" and notifications
// {"channel_name":T,"notification":DATA}, and takes batch arrays.
type server struct{ protocol.ChannelServer }

var wire = &server{protocol.ChannelServer{
	RPCServer: protocol.RPCServer{
		DialectName:  Name,
		Head:         `{"id":`,
		AllowBatches: true,
		Note:         protocol.Notification{Head: notificationHead, Mid: notificationMid, Tail: `}`},
	},
	PrivatePrefixes: privatePrefixes,
	// The snapshot mark is a member of the envelope, beside the channel.
	SnapshotNote: &protocol.Notification{Head: notificationHead, Mid: `,"snapshot":true` + notificationMid, Tail: `}`},
}}

// Server returns the server half of the Thalex dialect.
func Server() protocol.Server { return wire }

func (s *server) ParseFrame(dst []protocol.Incoming, frame []byte) ([]protocol.Incoming, bool, *protocol.Error) {
	return s.Parse(dst, frame, op)
}

// op reads Thalex's subscription methods: public/subscribe,
// private/subscribe and unsubscribe; any other method is a call.
func op(req *protocol.Incoming) {
	switch req.Method {
	case "public/subscribe", "private/subscribe":
		protocol.ChannelOp(req)
	case unsubscribeMethod:
		req.Op = protocol.OpUnsubscribe
		protocol.ReadChannels(req)
	}
}

// AppendReconnectNotice appends the system channel's reconnect event.
func (s *server) AppendReconnectNotice(dst []byte) []byte {
	return s.Note.AppendTo(dst, systemChannel, []byte(`{"event":"reconnect"}`))
}
