package standby

import (
	"context"
	"fmt"
	"hash/maphash"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// bookDialect is the part of a venue with books a merge reads: a
// sequenced topic, whose messages "id/prev" (prev 0: a snapshot) are
// identified by their change id alone, as Deribit's change_id
// identifies a snapshot and a change alike. Nothing else of it is used.
type bookDialect struct{ protocol.Protocol }

func (bookDialect) Name() string { return "booktest" }

func (bookDialect) NewTopic(name string) (*protocol.Topic, error) {
	return &protocol.Topic{Name: name, Key: name, Sequenced: true}, nil
}

func (bookDialect) Sequence(data []byte) (id, prev uint64, ok bool) {
	_, err := fmt.Sscanf(string(data), "%d/%d", &id, &prev)
	return id, prev, err == nil
}

func (d bookDialect) Venue() protocol.Venue { return protocol.Venue{Messages: bookIdentity{}} }

// bookIdentity identifies a book message by its change id.
type bookIdentity struct{ protocol.ReadsNothing }

func (bookIdentity) AppendIdentity(dst, data []byte) ([]byte, bool) {
	id, _, ok := bookDialect{}.Sequence(data)
	return strconv.AppendUint(dst, id, 10), ok
}

// bookStandby is a Standby of legs connectionless legs on bookDialect,
// each up since t0, and a merge of topic on it; offers are made by the
// test, as each leg's reader would.
func bookStandby(t *testing.T, legs int, topic string, t0 time.Time) *merge {
	p := bookDialect{}
	sb := &Standby{legs: make([]*client.Client, legs), health: make([]legHealth, legs), seed: maphash.MakeSeed(),
		merges: make(map[*merge]struct{}), proto: p}
	sb.ctx, sb.cancel = context.WithCancel(context.Background())
	t.Cleanup(sb.cancel)
	for i := range sb.legs {
		sb.health[i].upSince.Store(t0.UnixNano())
	}
	parsed, err := p.NewTopic(topic)
	require.NoError(t, err)
	m := sb.mergeInto([]*protocol.Topic{parsed})
	m.out = client.NewInlet([]string{topic}) // the delivery a leg's NewMerge gives, on no connection
	t.Cleanup(func() { _ = m.end(context.Background(), nil) })
	return m
}

// bookMsg is a message of topic placed at id, following prev (0: a
// snapshot, flagged as the leg's reader flags one).
func bookMsg(topic string, id, prev uint64, at time.Time, flags client.Flags) client.Message {
	if prev == 0 {
		flags |= client.FlagSnapshot
	}
	return client.Message{Topic: topic, Data: fmt.Appendf(nil, "%d/%d", id, prev), Flags: flags, RecvTime: at}
}

// delivered drains what the merge delivered so far.
func delivered(m *merge) []string {
	var got []string
	for {
		select {
		case msg := <-m.out.Subscription().C():
			got = append(got, string(msg.Data))
		default:
			return got
		}
	}
}

// A leg that saw change 3, lost its connection, and came back with a
// snapshot at change 3 while the other leg had delivered change 4 and
// then 5: the snapshot is one change behind the merged stream and never
// reaches the program, nor does any change it sends until it is level.
// (The identity merge alone delivered it: the leg had sent change 3's
// identity twice, which reads as a message repeated on purpose.)
func TestStandbyRejoinBehindNeverReachesTheProgram(t *testing.T) {
	const topic = "book.X"
	t0 := time.Unix(1000, 0)
	m := bookStandby(t, 2, topic, t0)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }

	for leg := range 2 {
		m.offer(leg, bookMsg(topic, 1, 0, at(1), 0))
		m.offer(leg, bookMsg(topic, 2, 1, at(2), 0))
		m.offer(leg, bookMsg(topic, 3, 2, at(3), 0))
	}
	m.sb.health[1].upSince.Store(0) // leg 1 is cut
	m.offer(0, bookMsg(topic, 4, 3, at(4), 0))
	m.sb.health[1].upSince.Store(at(5).UnixNano()) // and back, restored
	m.offer(1, bookMsg(topic, 3, 0, at(5), client.FlagReconnected))
	m.offer(0, bookMsg(topic, 5, 4, at(6), 0))
	m.offer(1, bookMsg(topic, 4, 3, at(6), 0))
	m.offer(1, bookMsg(topic, 5, 4, at(7), 0))
	m.offer(1, bookMsg(topic, 6, 5, at(7), 0))
	m.offer(0, bookMsg(topic, 6, 5, at(8), 0))

	assert.Equal(t, []string{"1/0", "2/1", "3/2", "4/3", "5/4", "6/5"}, delivered(m),
		"every change once, in order, and no snapshot after the change it is older than")
}

// A snapshot behind the stream is delivered when no other leg carries
// the stream at its place: the venue restarted its sequence (every leg
// sends the lower place), and a merge that waited for the old place
// would never deliver again.
func TestStandbyFollowsASequenceRestart(t *testing.T) {
	const topic = "book.X"
	t0 := time.Unix(1000, 0)
	m := bookStandby(t, 2, topic, t0)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	for leg := range 2 {
		m.offer(leg, bookMsg(topic, 90, 0, at(1), 0))
		m.offer(leg, bookMsg(topic, 91, 90, at(2), 0))
	}
	m.offer(0, bookMsg(topic, 5, 0, at(3), 0)) // leg 1 is still at 91: held back
	m.offer(1, bookMsg(topic, 5, 0, at(3), 0)) // leg 0 is at 5 too now: the stream restarted
	m.offer(0, bookMsg(topic, 6, 5, at(4), 0))
	m.offer(1, bookMsg(topic, 6, 5, at(4), 0))
	assert.Equal(t, []string{"90/0", "91/90", "5/0", "6/5"}, delivered(m))
}

// The merge places a message where its leg's client read it
// (client.Sink), and reads the place itself only where the client read
// none (0): a change its client read at 9 puts the stream at 9, and
// change 7 from the other leg, read here, is behind it.
func TestMergePlacesByThePlaceItsClientRead(t *testing.T) {
	const topic = "book.X"
	t0 := time.Unix(1000, 0)
	m := bookStandby(t, 2, topic, t0)
	m.offerAt(0, bookMsg(topic, 5, 4, t0, 0), 9)
	m.offerAt(1, bookMsg(topic, 7, 6, t0, 0), 0)
	m.offerAt(1, bookMsg(topic, 10, 9, t0, 0), 0)
	assert.Equal(t, []string{"5/4", "10/9"}, delivered(m))
}
