package standby

import (
	"context"
	"fmt"
	"hash/maphash"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/zeebo/xxh3"

	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/deribit"
	"github.com/wsfan/wsfan/pkg/ethereal"
	"github.com/wsfan/wsfan/pkg/ethereum"
	"github.com/wsfan/wsfan/pkg/kraken"
	"github.com/wsfan/wsfan/pkg/okx"
	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// headFrame is head n as a node writes it to the connection that holds
// subscription sub.
func headFrame(sub string, n int) []byte {
	return fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"%s","result":{"number":"0x%x","hash":"0x%064x","parentHash":"0x%064x"}}}`,
		sub, n, n+1, n)
}

// The fast path drops, on a leg's reader, a copy of a head another leg
// delivered, though each leg's subscription id differs, and tells the
// leg's client the head's place; two identical frames on one leg are
// two events: the second is delivered unless another leg delivered a
// second one too; an answer is never hashed; a leg rejoining after a
// hole drops nothing there.
// headCopies is legCopies on Ethereum, of newHeads.
func headCopies(t testing.TB) (sb *Standby, m *merge, read func(leg int, frame []byte) (client.Copy, bool)) {
	p := ethereum.Protocol()
	topic, err := p.NewTopic("newHeads")
	require.NoError(t, err)
	return legCopies(t, p, "newHeads", []*protocol.Topic{topic})
}

// legCopies is a Standby of two connectionless legs on p with its fast
// path, and a merge on it of name (topics, parsed; none for a merge with
// no placed topic); read is a leg's reader: the filter, then, for a
// frame it keeps, classification and the merge's offer, as name's.
func legCopies(t testing.TB, p protocol.Protocol, name string, topics []*protocol.Topic) (sb *Standby, m *merge, read func(leg int, frame []byte) (client.Copy, bool)) {
	sb = &Standby{legs: make([]*client.Client, 2), health: make([]legHealth, 2), seed: maphash.MakeSeed(),
		merges: make(map[*merge]struct{}), proto: p, copies: newCopies(p, 2)}
	require.NotNil(t, sb.copies, "the venue's notifications are the same on every connection but for a part of the connection's")
	sb.ctx, sb.cancel = context.WithCancel(context.Background())
	t.Cleanup(sb.cancel)
	t0 := time.Now()
	for i := range sb.legs {
		sb.health[i].upSince.Store(t0.UnixNano())
	}
	m = sb.mergeInto(topics)
	m.out = client.NewInlet([]string{name})
	t.Cleanup(func() { _ = m.end(context.Background(), nil) })
	read = func(leg int, frame []byte) (client.Copy, bool) {
		cp, drop := sb.copies.read(leg, frame, t0)
		if !drop {
			var f protocol.Frame
			require.NoError(t, p.Classify(frame, &f))
			if f.Kind == protocol.KindNotification {
				m.offer(leg, client.Message{Topic: name, Data: f.Data, RecvTime: t0})
			}
		}
		return cp, drop
	}
	return sb, m, read
}

func TestCopiesDropWhatAnotherLegDelivered(t *testing.T) {
	sb, m, read := headCopies(t)
	sub := []string{"0x01", "0xcd0c3e8af590364c09d0fa6a1210faf5"}
	delivered := func() int { return len(m.out.Subscription().C()) }

	_, drop := read(0, headFrame(sub[0], 1))
	assert.False(t, drop, "a first arrival")
	cp, drop := read(1, headFrame(sub[1], 1))
	assert.True(t, drop, "leg 1's copy, its own subscription id cut out")
	assert.Equal(t, client.Copy{Topic: "newHeads", Place: 1, Placed: true}, cp, "the leg's client learns the head's place")
	assert.Equal(t, uint64(2), m.places["newHeads"].leg[1].Load(), "the merge learns leg 1 reached head 1")
	assert.Equal(t, 1, delivered())

	_, drop = read(1, headFrame(sub[1], 1))
	assert.False(t, drop, "leg 1 sends the same head again: a second event, no copy")
	assert.Equal(t, 2, delivered(), "delivered: leg 1's dropped copy was counted as its first sending")
	_, drop = read(0, headFrame(sub[0], 1))
	assert.True(t, drop, "leg 0's second sending, a copy of leg 1's")
	assert.Equal(t, 2, delivered())

	answer := []byte(`{"jsonrpc":"2.0","id":1,"result":"0x1"}`)
	_, drop = read(0, answer)
	assert.False(t, drop)
	_, drop = read(1, answer)
	assert.False(t, drop, "answers are never hashed")
	hashed := 0
	for i := range sb.copies.ring {
		if sb.copies.ring[i].e.key != (xxh3.Uint128{}) {
			hashed++
		}
	}
	assert.Equal(t, 1, hashed, "only the head was hashed")

	_, drop = read(0, headFrame(sub[0], 2))
	assert.False(t, drop)
	m.mu.Lock()
	m.legs[1].on = true // back from a hole another leg carried
	m.legs[1].rejoin.Store(true)
	m.mu.Unlock()
	_, drop = read(1, headFrame(sub[1], 2))
	assert.False(t, drop, "a rejoining leg's copy goes to the merge, which learns it is in step")
	m.mu.Lock()
	assert.False(t, m.legs[1].on, "in step again")
	m.mu.Unlock()
	assert.Equal(t, 3, delivered())
}

// A hash is forgotten with its counts when the ring comes round to its
// entry: its copy is not dropped on the reader, and the identity merge,
// the safety net, drops it instead.
func TestCopiesForgetAHashTheRingCameRoundTo(t *testing.T) {
	sb, m, read := headCopies(t)
	_, drop := read(0, headFrame("0x01", 1))
	assert.False(t, drop)
	wrapRing(t, sb, 0)
	_, drop = read(1, headFrame("0x02", 1))
	assert.False(t, drop, "head 1 was forgotten: its copy goes on to the merge")
	assert.Equal(t, 1, len(m.out.Subscription().C()), "which drops it")
}

// wrapRing has leg read copyRing heads no one else reads (and no merge
// is offered), so that the ring comes round to every entry before them.
func wrapRing(t *testing.T, sb *Standby, leg int) {
	t.Helper()
	for n := range copyRing {
		_, drop := sb.copies.read(leg, headFrame("0x01", 1_000_000+n), time.Now())
		require.False(t, drop)
	}
}

// A leg that reads the stream in another order than the ring holds it
// (two topics interleaved otherwise on its connection) finds its copies
// through the index: every one is dropped.
func TestCopiesFoundOutOfTheRingsOrder(t *testing.T) {
	sb, m, read := headCopies(t)
	order := []int{1, 2, 3, 4, 5, 6}
	for _, n := range order {
		_, drop := read(0, headFrame("0x01", n))
		require.False(t, drop)
	}
	for _, n := range []int{2, 1, 4, 3, 6, 5} {
		cp, drop := read(1, headFrame("0x02", n))
		assert.True(t, drop, "head %d: a copy", n)
		assert.Equal(t, uint64(n), cp.Place)
	}
	assert.Equal(t, len(order), len(m.out.Subscription().C()))
	assert.Equal(t, uint64(len(order)), sb.copies.head.Load(), "one entry a head: the second leg's found them all")
}

// A message a leg's supervisor fetched (a backfill) is keyed by no
// frame, even where its bytes lie in the last frame the leg's reader
// read (that frame collected, its memory given to the fetch): keyed so,
// it would mark that frame delivered, and the other leg's copy of it,
// never delivered, would be dropped.
func TestCopiesKeyNoFetchedMessage(t *testing.T) {
	sb, m, read := headCopies(t)
	sub := []string{"0x01", "0xcd0c3e8af590364c09d0fa6a1210faf5"}

	frame := headFrame(sub[0], 5)
	_, drop := sb.copies.read(0, frame, time.Now()) // read, its message not offered yet
	require.False(t, drop)
	var f protocol.Frame
	require.NoError(t, ethereum.Protocol().Classify(headFrame(sub[0], 4), &f))
	fetched := frame[:copy(frame, f.Data)] // head 4, fetched, where head 5's frame lay
	m.offer(0, client.Message{Topic: "newHeads", Data: fetched, Flags: client.FlagBackfilled, RecvTime: time.Now()})

	_, drop = read(1, headFrame(sub[1], 5))
	assert.False(t, drop, "head 5 was never delivered: leg 1's is no copy")
	var heads []string
	for len(m.out.Subscription().C()) > 0 {
		msg := <-m.out.Subscription().C()
		heads = append(heads, string(msg.Data[:14]))
	}
	assert.Equal(t, []string{`{"number":"0x4`, `{"number":"0x5`}, heads, "the fetched head, then head 5")
}

// Each venue's documented notifications (testdata/documented.txt) are
// dropped by the fast path on a second leg once a first delivered them
// (Ethereum's under each leg's own subscription id), and its answers and
// events are never hashed: OKX's pushes, Kraken's market data and
// Ethereal's events have a copy layout as Deribit's, Thalex's and
// Ethereum's do (Kraken's status, which carries the connection's id, and
// heartbeat are a connection's own; so are Thalex's system events).
func TestCopiesOfEachVenue(t *testing.T) {
	for _, v := range []struct {
		name  string
		proto protocol.Protocol
	}{
		{"deribit", deribit.Protocol()}, {"ethereal", ethereal.Protocol()}, {"ethereum", ethereum.Protocol()},
		{"kraken", kraken.Protocol()}, {"okx", okx.Protocol()}, {"thalex", thalex.Protocol()},
	} {
		t.Run(v.name, func(t *testing.T) {
			doc, err := os.ReadFile(filepath.Join("..", v.name, "testdata", "documented.txt"))
			require.NoError(t, err)
			notifications := 0
			for line := range strings.Lines(string(doc)) {
				kind, frame, ok := strings.Cut(strings.TrimPrefix(strings.TrimSpace(line), "<-- "), " ")
				if !ok || !strings.HasPrefix(line, "<-- ") {
					continue
				}
				if kind != "notification" {
					_, hashed := v.proto.Venue().Messages.CopyBytes([]byte(frame))
					assert.False(t, hashed, "a %s is never hashed: %.120s", kind, frame)
					continue
				}
				notifications++
				_, _, read := legCopies(t, v.proto, "topic", nil)
				_, drop := read(0, []byte(frame))
				assert.False(t, drop, "a first arrival: %.120s", frame)
				if v.name == "ethereum" { // leg 1's copy under the id its node gave it
					frame = regexp.MustCompile(`"subscription":"0x[0-9a-f]+"`).ReplaceAllString(frame, `"subscription":"0x2"`)
				}
				cp, drop := read(1, []byte(frame))
				assert.True(t, drop, "leg 1's copy: %.120s", frame)
				assert.Equal(t, "topic", cp.Topic)
			}
			assert.NotZero(t, notifications)
		})
	}
}

// A hash forgotten (the ring came round to it) is counted from one
// again: a leg's next reading of it, a second event, must not be taken
// for a copy of the first, which was delivered; the identity merge
// judges it (a second sending: delivered).
func TestCopiesForgottenByALegDropNoSecondEvent(t *testing.T) {
	sb, m, read := headCopies(t)
	_, drop := read(0, headFrame("0x01", 1))
	require.False(t, drop)
	require.Equal(t, 1, len(m.out.Subscription().C()), "head 1 delivered")
	wrapRing(t, sb, 0)
	_, drop = read(0, headFrame("0x01", 1))
	assert.False(t, drop, "leg 0's second head 1 is no copy, though counted as its first reading again")
	assert.Equal(t, 2, len(m.out.Subscription().C()), "the identity merge delivers it: leg 0 sent it twice")
}

// A leg whose last notification was a copy dropped trails: it pauses
// before reading its drained socket while another leg leads, and reads at
// once again from its first frame that is not a copy. Two trailing legs
// never both pause, and a leg does not while a call waits on it.
func TestCopiesTrailingLegPauses(t *testing.T) {
	sb, _, read := headCopies(t)
	c := sb.copies
	var waits [2]bool // whether a call waits on each leg
	for i := range waits {
		waiting := func() bool { return waits[i] }
		c.legs[i].waiting.Store(&waiting)
	}
	assert.Zero(t, c.pause(0))
	assert.Zero(t, c.pause(1))

	_, drop := read(0, headFrame("0x01", 1))
	require.False(t, drop)
	_, drop = read(1, headFrame("0x02", 1))
	require.True(t, drop)
	assert.Equal(t, trailWait, c.pause(1), "leg 1 read a copy: it trails leg 0")
	assert.Zero(t, c.pause(0), "leg 0 leads")
	waits[1] = true
	assert.Zero(t, c.pause(1), "a call waits on leg 1: its answer is not held back")
	waits[1] = false

	_, drop = read(1, headFrame("0x02", 2))
	require.False(t, drop, "leg 0 fell silent: head 2 is leg 1's first arrival")
	assert.Zero(t, c.pause(1), "leg 1 leads again")

	c.legs[0].trailing.Store(true)
	c.legs[1].trailing.Store(true)
	assert.Zero(t, c.pause(0), "no leg leads: none pauses")
	assert.Zero(t, c.pause(1))
}

// A frame another leg has read and not yet offered to the merge is in
// flight: a leg reading its copy then waits for that offer (raceWait),
// where the copy is dropped, rather than taking it to the merge too.
// However the two interleave, the head is delivered once.
func TestCopiesWaitForACopyInFlight(t *testing.T) {
	sb, m, read := headCopies(t)
	frame := headFrame("0x01", 1)
	_, drop := sb.copies.read(0, frame, time.Now()) // read, not offered yet
	require.False(t, drop)
	e := &sb.copies.ring[0].e
	assert.True(t, e.inFlight(1, 1), "leg 0 read head 1 and has not offered it")
	assert.False(t, e.inFlight(0, 1), "a leg's own reading is not another's in flight")

	done := make(chan struct{})
	go func() {
		defer close(done)
		read(1, headFrame("0x02", 1))
	}()
	var f protocol.Frame
	require.NoError(t, ethereum.Protocol().Classify(frame, &f))
	m.offer(0, client.Message{Topic: "newHeads", Data: f.Data, RecvTime: time.Now()}) // its data lies in the frame read
	<-done
	assert.Equal(t, 1, len(m.out.Subscription().C()), "head 1 delivered once")
	sb.copies.ring[0].mu.Lock()
	defer sb.copies.ring[0].mu.Unlock()
	assert.False(t, e.inFlight(1, 1), "offered")
}

// An index entry names its hash's ring position while the ring holds
// it, across the wrap of the 16 bits it keeps of the position; never
// for another hash (other high bits), nor once the ring came round.
func TestIndexedNamesLivePositionsOnly(t *testing.T) {
	key := xxh3.Uint128{Hi: 0xdeadbeef_00c0ffee, Lo: 42}
	for _, p := range []uint64{0, 7, 1<<16 - 2, 1<<16 + 3, 1<<32 - 2, 5 << 40} {
		v := indexEntry(key, p)
		for _, head := range []uint64{p + 1, p + 2, p + copyRing} {
			got, ok := indexed(v, key, head)
			assert.True(t, ok, "position %d, head %d", p, head)
			assert.Equal(t, p, got, "head %d", head)
		}
		_, ok := indexed(v, key, p+copyRing+1)
		assert.False(t, ok, "position %d forgotten: the ring came round to it", p)
		_, ok = indexed(v, xxh3.Uint128{Hi: key.Hi ^ 1<<63, Lo: key.Lo}, p+1)
		assert.False(t, ok, "position %d: another hash's", p)
	}
	_, ok := indexed(0, key, 5)
	assert.False(t, ok, "an empty slot names nothing")
}

// The ring's entries hold no pointer (their first arrival's merge, topic
// and place are named by number, copies.origins): the collector does
// not scan the ring's megabytes.
func TestCopiesRingHoldsNoPointer(t *testing.T) {
	var walk func(reflect.Type) []string
	walk = func(ty reflect.Type) []string {
		switch ty.Kind() {
		case reflect.Struct:
			var found []string
			for i := range ty.NumField() {
				for _, f := range walk(ty.Field(i).Type) {
					found = append(found, ty.Field(i).Name+"."+f)
				}
			}
			return found
		case reflect.Array:
			return walk(ty.Elem())
		case reflect.Pointer, reflect.UnsafePointer, reflect.String, reflect.Slice, reflect.Map,
			reflect.Chan, reflect.Func, reflect.Interface:
			return []string{ty.String()}
		}
		return nil
	}
	assert.Empty(t, walk(reflect.TypeFor[copySlot]()))
}

// A merge that ended gives its origins back: a leg's copy of a head it
// delivered is dropped no more, and a merge made since, given the same
// number for its origin, is not taken for the one that delivered it;
// its own first arrivals' copies are dropped.
func TestCopiesOfAnEndedMergeNotDropped(t *testing.T) {
	sb, m, read := headCopies(t)
	_, drop := read(0, headFrame("0x01", 1))
	require.False(t, drop)
	require.NoError(t, m.end(context.Background(), nil))

	topic, err := ethereum.Protocol().NewTopic("newHeads")
	require.NoError(t, err)
	m2 := sb.mergeInto([]*protocol.Topic{topic})
	m2.out = client.NewInlet([]string{"newHeads"})
	t.Cleanup(func() { _ = m2.end(context.Background(), nil) })
	read2 := func(leg int, frame []byte) bool {
		_, drop := sb.copies.read(leg, frame, time.Now())
		if !drop {
			var f protocol.Frame
			require.NoError(t, ethereum.Protocol().Classify(frame, &f))
			m2.offer(leg, client.Message{Topic: "newHeads", Data: f.Data, RecvTime: time.Now()})
		}
		return drop
	}
	require.False(t, read2(0, headFrame("0x01", 2)))
	require.Len(t, m2.origins, 1)
	assert.Equal(t, uint32(0), m2.origins["newHeads"].ref, "the ended merge's number, given again")

	assert.False(t, read2(1, headFrame("0x02", 1)), "head 1's first arrival went to the merge that ended")
	assert.True(t, read2(1, headFrame("0x02", 2)), "head 2's, to the new one")
	assert.Equal(t, 1, len(m2.out.Subscription().C()), "head 2 alone: the new merge drops head 1, behind it (order.go)")
}

// A leg back from a hole may read a head live on its new connection
// (dropped there as a copy of another leg's, and counted as the leg's
// sending) before its client fetches the same head to fill the hole:
// the fetched one is no second sending, and is not delivered again
// (go-ethereum's node behind two proxies delivered head 5 twice so, in
// 1 run of 15 of gethtest's TestStandbyOnGethLosesNoHead).
func TestCopiesFetchedAfterItsLiveCopyNotDeliveredTwice(t *testing.T) {
	_, m, read := headCopies(t)
	_, drop := read(1, headFrame("0x02", 5))
	require.False(t, drop, "leg 1 carries the stream")
	_, drop = read(0, headFrame("0x01", 5))
	require.True(t, drop, "leg 0, back from its hole, reads head 5 live: a copy")
	fetched := fmt.Appendf(nil, `{"hash":"0x%064x","number":"0x5","parentHash":"0x%064x"}`, 6, 5) // as eth_getBlockByNumber spells it
	m.offer(0, client.Message{Topic: "newHeads", Data: fetched, Flags: client.FlagBackfilled, RecvTime: time.Now()})
	assert.Equal(t, 1, len(m.out.Subscription().C()), "head 5 once")
}

// A leg back from a hole another leg carried delivers what its client
// fetched unflagged where it comes first (the other leg slower): the
// merged stream had no hole, as it has no reconnect (go-ethereum's node
// behind two proxies: head 5 fetched by the leg back from its hole came
// before the other leg's, flagged backfilled).
func TestCopiesFetchedFirstAfterACoveredHoleUnflagged(t *testing.T) {
	_, m, read := headCopies(t)
	for n := 1; n <= 4; n++ {
		_, drop := read(1, headFrame("0x02", n))
		require.False(t, drop)
	}
	fetch := func(n int, flags client.Flags) {
		data := fmt.Appendf(nil, `{"hash":"0x%064x","number":"0x%x","parentHash":"0x%064x"}`, n+1, n, n)
		m.offer(0, client.Message{Topic: "newHeads", Data: data, Flags: flags, RecvTime: time.Now()})
	}
	fetch(4, client.FlagReconnected|client.FlagBackfilled) // leg 0 back: the stream has head 4 already
	fetch(5, client.FlagBackfilled)                        // ahead of leg 1's
	_, drop := read(1, headFrame("0x02", 5))
	require.False(t, drop, "leg 1's head 5 goes to the merge, which has it")
	_, drop = read(0, headFrame("0x01", 6))
	require.False(t, drop, "leg 0 live again")
	fetch(7, client.FlagBackfilled) // a later fetch, after its live heads: no longer the covered hole's
	var got []client.Flags
	for len(m.out.Subscription().C()) > 0 {
		got = append(got, (<-m.out.Subscription().C()).Flags)
	}
	assert.Equal(t, []client.Flags{0, 0, 0, 0, 0, 0, client.FlagBackfilled}, got, "heads 1-7 once; only head 7 flagged")
}
