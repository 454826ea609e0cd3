package client

// msgQueue is a FIFO of messages in a ring that grows on demand and lets
// its storage go once empty: the part of a subscription's buffer beyond
// its channel (see Subscription.push), so a subscription costs its
// channel's few slots until its consumer falls behind.
type msgQueue struct {
	buf  []Message
	head int // index of the oldest message
	n    int // messages queued
}

// queueKeep is the most storage an empty queue keeps for next time.
const queueKeep = 64

func (q *msgQueue) len() int { return q.n }

// push appends m, doubling the ring when it is full.
func (q *msgQueue) push(m Message) {
	if q.n == len(q.buf) {
		grown := make([]Message, max(2*len(q.buf), 16))
		copied := copy(grown, q.buf[q.head:])
		copy(grown[copied:], q.buf[:q.head])
		q.buf, q.head = grown, 0
	}
	q.buf[(q.head+q.n)%len(q.buf)] = m
	q.n++
}

// front returns the oldest message; ok is false when the queue is empty.
func (q *msgQueue) front() (m Message, ok bool) {
	if q.n == 0 {
		return Message{}, false
	}
	return q.buf[q.head], true
}

// pop removes the oldest message; once empty, storage beyond queueKeep
// messages is let go.
func (q *msgQueue) pop() {
	q.buf[q.head] = Message{} // drop the data reference
	q.head = (q.head + 1) % len(q.buf)
	q.n--
	if q.n == 0 {
		q.head = 0
		if len(q.buf) > queueKeep {
			q.buf = nil
		}
	}
}
