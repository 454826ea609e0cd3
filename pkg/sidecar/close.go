package sidecar

import (
	"fmt"

	"github.com/gorilla/websocket"
)

// closeReason is why the sidecar ends a local session: the WebSocket close
// code and text the client sees, and the label of
// wsfan_sidecar_disconnects_total. The zero value closes silently (the
// client went away).
type closeReason struct {
	code  int
	text  string
	label string
}

func reasonSlow(limit int) closeReason {
	return closeReason{websocket.ClosePolicyViolation,
		fmt.Sprintf("slow consumer: more than %d bytes queued", limit), "slow_consumer"}
}

func reasonFrameTooLarge(limit int64) closeReason {
	return closeReason{websocket.CloseMessageTooBig,
		fmt.Sprintf("frame exceeds the %d-byte limit", limit), "frame_too_large"}
}

func reasonTooManyTopics(limit int) closeReason {
	return closeReason{websocket.ClosePolicyViolation,
		fmt.Sprintf("too many topics: the limit is %d per client", limit), "too_many_topics"}
}

func reasonReplyTooLarge(size, limit int) closeReason {
	return closeReason{websocket.CloseMessageTooBig,
		fmt.Sprintf("an answer of %d bytes exceeds the %d-byte queue: ask for less in one request", size, limit), "reply_too_large"}
}

func reasonTooManyClients(limit int) closeReason {
	return closeReason{websocket.CloseTryAgainLater,
		fmt.Sprintf("too many clients: the limit is %d", limit), "too_many_clients"}
}

func reasonTopicLost(topic string, err error) closeReason {
	return closeReason{websocket.CloseInternalServerErr,
		fmt.Sprintf("upstream ended %s: %v", topic, err), "upstream_topic_lost"}
}

var (
	reasonShutdown   = closeReason{websocket.CloseGoingAway, "sidecar shutting down", "shutdown"}
	reasonBinary     = closeReason{websocket.CloseUnsupportedData, "binary frames are not supported", "binary_frame"}
	reasonPeerClosed = closeReason{websocket.CloseNormalClosure, "", ""}
	// reasonTokenRemoved closes a client whose token a reload removed
	// (Server.Reload).
	reasonTokenRemoved = closeReason{websocket.ClosePolicyViolation,
		"reconfigured: the token this connection authenticated with is no longer accepted", "token_removed"}
	disconnectReasons = []string{"slow_consumer", "frame_too_large", "too_many_topics", "too_many_clients",
		"upstream_topic_lost", "shutdown", "binary_frame", "reply_too_large", "token_removed"}
)
