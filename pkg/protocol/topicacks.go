package protocol

import "bytes"

// TopicAcking reads the answers of a venue whose server answers each topic of a
// subscribe or unsubscribe request in a frame of its own, every one
// carrying the request's id (OKX: an "event" frame for each argument,
// https://www.okx.com/docs-v5/en/#overview-websocket-subscribe), instead
// of one response for the request. Classify makes each such frame a
// KindResponse with the request's id: an acknowledgement with a Result
// naming its topic, a refusal with an Error. The client answers a
// request once each of its topics is, so one request may carry as many
// topics as the venue's frame allows, and a restore stays one write. A
// venue gives it as Venue.TopicAcks.
type TopicAcking interface {
	// AckedTopic returns the index in req.Topics of the topic an
	// acknowledgement's Result names, or -1 when it names none of them.
	AckedTopic(req *Request, result []byte) int
	// RefusedTopic reads a refusal's Error: the index in req.Topics of
	// the topic it names; or whole, a refusal of the request itself
	// (unreadable, throttled, not logged in), which holds for every
	// topic of the request not answered yet. A refusal that names none
	// of the request's topics is neither (i is -1): it refuses one of
	// them, the client cannot tell which yet, and takes it for one of
	// those no other answer names once only as many are left as such
	// refusals came.
	RefusedTopic(req *Request, err []byte) (i int, whole bool)
}

// TopicAnswering is the server half of a TopicAcking dialect. Its
// answers to a subscribe or unsubscribe are several messages, written as
// a JSON text sequence (RFC 7464: each message after an RS byte, 0x1E,
// which no JSON text contains outside a string, where it would be
// escaped); a server writes each as a WebSocket message of its own
// (EachMessage).
type TopicAnswering interface {
	// AppendTopicAnswers appends the acknowledgements of request id
	// (raw JSON; nil for none), one for each topic of keys: subscribed
	// when op is OpSubscribe, removed when it is OpUnsubscribe.
	AppendTopicAnswers(dst, id []byte, op Op, keys []string) []byte
	// AppendTopicRefusal appends the refusal of topic key, subscribed by
	// request id, with e, the venue's reason, as one message of such a
	// sequence; a {0} in e's message is the topic as the venue spells it
	// in its refusals (OKX's 60018: "Wrong URL or {0} doesn't exist").
	AppendTopicRefusal(dst, id []byte, key string, e *Error) []byte
}

// RecordSeparator starts each message of a JSON text sequence (RFC 7464).
const RecordSeparator = 0x1E

// EachMessage calls fn with every message of answer: the messages of a
// JSON text sequence (a TopicAnswering server's answers), or answer
// itself when it is a single message.
func EachMessage(answer []byte, fn func(msg []byte)) {
	if len(answer) == 0 || answer[0] != RecordSeparator {
		fn(answer)
		return
	}
	for len(answer) > 0 {
		answer = answer[1:] // the separator
		end := bytes.IndexByte(answer, RecordSeparator)
		if end < 0 {
			end = len(answer)
		}
		if end > 0 {
			fn(answer[:end])
		}
		answer = answer[end:]
	}
}
