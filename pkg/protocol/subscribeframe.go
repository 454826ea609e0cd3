package protocol

import "fmt"

// SubscribeFrame is the frame a program sends to subscribe topic over
// p, as p's client half encodes it with request id 1: what a person
// pastes into a WebSocket console to try a topic (the demo's banner, the
// sidecar's status page).
func SubscribeFrame(p Protocol, topic string) (string, error) {
	t, err := p.NewTopic(topic)
	if err != nil {
		return "", err
	}
	var b Batch
	p.Subscribe(&b, []*Topic{t}, func() uint64 { return 1 }, 0)
	if len(b.Messages) == 0 {
		return "", fmt.Errorf("%s encodes no subscribe frame for %q", p.Name(), topic)
	}
	return string(b.Messages[0]), nil
}
