package recovery

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/wsfan/wsfan/pkg/protocol"
)

// The tests run a Recovery over a toy venue whose messages start with
// their position ("7"), its current position answered by a "current" call
// and each missed message fetched by a "get" call of its position: the
// recoverer's logic is tested alone, apart from Ethereum's encoding
// (pkg/ethereum tests that) and from the client. On a chain a message is
// "number/hash/parent" ("7/7/6"); a retraction ends in "!".

// msg is the host's message: a payload and the marks set on it.
type msg struct {
	data  string
	marks Mark
}

// toyVenue is the protocol.Recoverer of the toy venue.
type toyVenue struct{}

func (toyVenue) Position(_ *protocol.Topic, data []byte) (uint64, bool) {
	digits := strings.IndexFunc(string(data), func(r rune) bool { return r < '0' || r > '9' })
	if digits < 0 {
		digits = len(data)
	}
	n, err := strconv.ParseUint(string(data[:digits]), 10, 64)
	return n, err == nil
}
func (toyVenue) Current() protocol.Call { return protocol.Call{Method: "current"} }
func (toyVenue) ParseCurrent(_ *protocol.Topic, result []byte) (uint64, error) {
	return strconv.ParseUint(string(result), 10, 64)
}
func (toyVenue) Distance(_ *protocol.Topic, after, through uint64) uint64 { return through - after }
func (toyVenue) Fetch(_ *protocol.Topic, after, through uint64) []protocol.Call {
	var calls []protocol.Call
	for p := after + 1; p <= through; p++ {
		calls = append(calls, protocol.Call{Method: "get", Params: []byte(strconv.FormatUint(p, 10))})
	}
	return calls
}
func (toyVenue) Messages(_ *protocol.Topic, _, _ uint64, results [][]byte) ([][]byte, error) {
	return results, nil
}

// toyReader reads the toy venue's links and retractions.
type toyReader struct{ protocol.ReadsNothing }

func (toyReader) Link(data []byte) (number uint64, hash, parent [32]byte, ok bool) {
	parts := strings.Split(string(data), "/")
	if len(parts) != 3 {
		return 0, hash, parent, false
	}
	var h, p uint64
	number, err1 := strconv.ParseUint(parts[0], 10, 64)
	h, err2 := strconv.ParseUint(parts[1], 10, 64)
	p, err3 := strconv.ParseUint(parts[2], 10, 64)
	binary.BigEndian.PutUint64(hash[:], h)
	binary.BigEndian.PutUint64(parent[:], p)
	return number, hash, parent, err1 == nil && err2 == nil && err3 == nil
}

func (toyReader) Retracted(data []byte) bool { return strings.HasSuffix(string(data), "!") }

// errTooLarge is the toy node's refusal of a batch it finds too large.
var errTooLarge = errors.New("range too large")

// host is the client the Recovery serves: it records what is delivered,
// answers "current" with current, fetches block(p) for position p (p
// itself when nil), and refuses batches of more calls than largest (0:
// any size) with errTooLarge, or every batch with batchErr.
type host struct {
	current  uint64
	block    func(p string) string
	largest  int
	batchErr error

	mu        sync.Mutex
	delivered []msg
	batches   []int // the size of every batch asked for
	taken     int
	topics    []*Topic[msg]
}

func (h *host) Data(m msg) []byte { return []byte(m.data) }
func (h *host) Mark(m msg, set, clear Mark) msg {
	m.marks = m.marks&^clear | set
	return m
}
func (h *host) Fetched(_ string, data []byte, marks Mark, _ time.Time) msg {
	return msg{data: string(data), marks: marks}
}
func (h *host) Call(_ context.Context, method string, _ json.RawMessage) ([]byte, error) {
	if method != "current" {
		return nil, fmt.Errorf("unexpected call %s", method)
	}
	return []byte(strconv.FormatUint(h.current, 10)), nil
}
func (h *host) Batch(_ context.Context, calls []protocol.Call) ([]json.RawMessage, []error, error) {
	h.mu.Lock()
	h.batches = append(h.batches, len(calls))
	h.mu.Unlock()
	if h.batchErr != nil {
		return nil, nil, h.batchErr
	}
	results := make([]json.RawMessage, len(calls))
	errs := make([]error, len(calls))
	for i, c := range calls {
		if h.largest > 0 && len(calls) > h.largest {
			errs[i] = errTooLarge
			continue
		}
		results[i] = json.RawMessage(c.Params)
		if h.block != nil {
			results[i] = json.RawMessage(h.block(string(c.Params)))
		}
	}
	return results, errs, nil
}
func (h *host) RangeTooLarge(err error) bool         { return errors.Is(err, errTooLarge) }
func (h *host) Reorg(string, uint64, []string, bool) {}
func (h *host) Topics(yield func(*Topic[msg]) bool) {
	for _, tt := range h.topics {
		if !yield(tt) {
			return
		}
	}
}

func (h *host) deliver(m msg) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.delivered = append(h.delivered, m)
}

func (h *host) got() []msg {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]msg(nil), h.delivered...)
}

// newTopic is a Backfill topic of a Recovery bounded to most blocks,
// delivering to h, at place pos.
func newTopic(h *host, most int, pos uint64, retracts bool) (*Recovery[msg], *Topic[msg]) {
	r := New[msg](h, protocol.Venue{Recoverer: toyVenue{}, Messages: toyReader{}}, most, zap.NewNop())
	tt := r.NewTopic(&protocol.Topic{Name: "heads", Backfill: true, Retracts: retracts}, h.deliver, func() { h.taken++ })
	tt.SetPlace(pos)
	h.topics = append(h.topics, tt)
	return r, tt
}

// live is the reader's side: each position passed as a live message, the
// ones Pass lets through delivered at once, as the reader does.
func live(h *host, tt *Topic[msg], positions ...uint64) {
	for _, p := range positions {
		liveData(h, tt, strconv.FormatUint(p, 10))
	}
}

// liveData passes live messages of the given payloads.
func liveData(h *host, tt *Topic[msg], data ...string) {
	for _, d := range data {
		if m, _, ok := tt.Pass(msg{data: d}); ok {
			h.deliver(m)
		}
	}
}

func positions(ms []msg) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.data
	}
	return out
}

func TestRecoverFillsTheHoleInOrderAndSkipsWhatTheFetchDelivered(t *testing.T) {
	h := &host{current: 10}
	r, tt := newTopic(h, 100, 5, false)
	require.True(t, r.Hold(tt))
	live(h, tt, 9, 10) // arrived on the new connection while held
	assert.Empty(t, h.got(), "held topics deliver nothing")

	r.Recover(context.Background(), []*Topic[msg]{tt})
	live(h, tt, 11)

	got := h.got()
	assert.Equal(t, []string{"6", "7", "8", "9", "10", "11"}, positions(got), "the missed ones in order, each once")
	assert.Equal(t, Backfilled|Reconnected, got[0].marks, "the first fetched one carries the reconnect")
	for _, m := range got[1:5] {
		assert.Equal(t, Backfilled, m.marks, m.data)
	}
	assert.Zero(t, got[5].marks, "a live one after a filled hole has no mark")
	assert.Equal(t, 1, h.taken, "the live ones' reconnect mark was taken once")
	assert.Equal(t, uint64(11), tt.Place())
}

// A node may announce the last blocks a backfill fetched on its
// subscription only after the backfill is done: those are delivered
// already, and are not delivered again; a retraction of one is.
func TestALiveMessageTheBackfillDeliveredIsNotDeliveredAgain(t *testing.T) {
	h := &host{current: 10}
	r, logs := newTopic(h, 100, 5, true)
	require.True(t, r.Hold(logs))
	r.Recover(context.Background(), []*Topic[msg]{logs})
	liveData(h, logs, "9", "10", "10!", "10r", "11", "10")
	assert.Equal(t, []string{"6", "7", "8", "9", "10", "10!", "10r", "11", "10"}, positions(h.got()),
		"9 and 10 late, dropped; the retraction of 10 and a reorg's new log at 10 delivered; once past the seam, nothing more is dropped")
}

// chainBlock is the toy chain's block at position p: its hash is its
// number, its parent the one before.
func chainBlock(p string) string {
	n, _ := strconv.Atoi(p)
	return fmt.Sprintf("%d/%d/%d", n, n, n-1)
}

// A reorg's new head at a place the backfill filled, held while it ran,
// is delivered, marked as a reorg; the held copies of what it fetched are
// not.
func TestAHeldReorgAtTheSeamIsDelivered(t *testing.T) {
	h := &host{current: 10, block: chainBlock}
	r, heads := newTopic(h, 100, 5, false)
	require.True(t, r.Hold(heads))
	liveData(h, heads, "9/9/8", "10/10/9", "10/100/9")
	r.Recover(context.Background(), []*Topic[msg]{heads})
	got := h.got()
	assert.Equal(t, []string{"6/6/5", "7/7/6", "8/8/7", "9/9/8", "10/10/9", "10/100/9"}, positions(got))
	assert.Equal(t, Reorg, got[5].marks)
}

func TestALiveHeadTheChainHoldsIsNotDeliveredAgain(t *testing.T) {
	h := &host{current: 10, block: chainBlock}
	r, heads := newTopic(h, 100, 5, false)
	require.True(t, r.Hold(heads))
	r.Recover(context.Background(), []*Topic[msg]{heads})
	liveData(h, heads, "10/10/9", "10/100/9", "11/110/100", "11/110/100")
	got := h.got()
	assert.Equal(t, []string{"6/6/5", "7/7/6", "8/8/7", "9/9/8", "10/10/9", "10/100/9", "11/110/100", "11/110/100"}, positions(got),
		"head 10 late, dropped; head 10 of another block, a reorg, delivered; past the seam a head is delivered as the node sends it")
	assert.Equal(t, Reorg, got[5].marks)
	assert.Equal(t, uint64(11), heads.Place())
}

func TestRecoverHalvesARangeTheNodeRefusesAsTooLarge(t *testing.T) {
	h := &host{current: 13, largest: 2}
	r, tt := newTopic(h, 100, 5, false)
	require.True(t, r.Hold(tt))
	r.Recover(context.Background(), []*Topic[msg]{tt})
	assert.Equal(t, []string{"6", "7", "8", "9", "10", "11", "12", "13"}, positions(h.got()))
	assert.Equal(t, []int{8, 4, 2, 2, 4, 2, 2}, h.batches, "8 refused, halved until each half is taken")
}

func TestRecoverBeyondTheBoundOrFailingMarksTheFirstLiveMessageAGap(t *testing.T) {
	for _, c := range []struct {
		name  string
		h     *host
		asked int // batches asked for
	}{
		{"beyond the bound", &host{current: 20}, 0},
		{"the fetch fails", &host{current: 8, batchErr: errors.New("node down")}, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, tt := newTopic(c.h, 10, 5, false)
			require.True(t, r.Hold(tt))
			live(c.h, tt, 21, 22)
			r.Recover(context.Background(), []*Topic[msg]{tt})
			assert.Equal(t, []msg{{"21", Gap}, {"22", 0}}, c.h.got(), "nothing fetched; the hole is flagged on the first live one")
			assert.Len(t, c.h.batches, c.asked)
			assert.Zero(t, c.h.taken)
		})
	}
}

func TestRecoverWithNothingMissedReleasesUnmarked(t *testing.T) {
	h := &host{current: 5}
	r, tt := newTopic(h, 100, 5, false)
	require.True(t, r.Hold(tt))
	live(h, tt, 6)
	r.Recover(context.Background(), []*Topic[msg]{tt})
	assert.Equal(t, []msg{{"6", 0}}, h.got())
	assert.Empty(t, h.batches)
}

func TestHoldNeedsAPlaceABoundAndARecoverer(t *testing.T) {
	h := &host{current: 10}
	r, unplaced := newTopic(h, 100, 0, false)
	assert.False(t, r.Hold(unplaced), "a topic with no place yet has nothing to backfill from")
	unbounded, tt := newTopic(h, 0, 5, false)
	assert.False(t, unbounded.Hold(tt), "WithBackfill(0) fetches nothing")
	none := New[msg](h, protocol.Venue{}, 100, zap.NewNop())
	assert.False(t, none.Hold(none.NewTopic(&protocol.Topic{Name: "x"}, h.deliver, func() {})), "a venue with no recoverer")

	// Let releases what was held without fetching: the next connection holds it again.
	r2, held := newTopic(h, 100, 5, false)
	require.True(t, r2.Hold(held))
	live(h, held, 9)
	r2.Let([]*Topic[msg]{held})
	live(h, held, 10)
	assert.Equal(t, []string{"9", "10"}, positions(h.got()))
	assert.Empty(t, h.batches)
}

func TestBaselinePlacesASparseTopicAtTheCurrentPosition(t *testing.T) {
	h := &host{current: 42}
	r, logs := newTopic(h, 100, 0, true)
	_, heads := newTopic(h, 100, 0, false)
	r.Baseline(context.Background(), []*Topic[msg]{logs})
	assert.Equal(t, uint64(42), logs.Place(), "a sparse topic is owed nothing before its subscribe")
	assert.Zero(t, heads.Place(), "a dense one takes its place from its first message")

	logs.SetPlace(50)
	r.Baseline(context.Background(), []*Topic[msg]{logs})
	assert.Equal(t, uint64(50), logs.Place(), "a place once set is kept")
}

// The reader passes live messages while the supervisor recovers: every
// position arrives once and in order, whichever side delivers it (run with
// -race).
func TestRecoverWhileTheReaderPasses(t *testing.T) {
	for range 20 {
		h := &host{current: 30}
		r, tt := newTopic(h, 100, 5, false)
		require.True(t, r.Hold(tt))
		done := make(chan struct{})
		go func() {
			defer close(done)
			for p := uint64(25); p <= 60; p++ {
				live(h, tt, p)
			}
		}()
		r.Recover(context.Background(), []*Topic[msg]{tt})
		<-done
		want := make([]string, 0, 55)
		for p := 6; p <= 60; p++ {
			want = append(want, strconv.Itoa(p))
		}
		require.Equal(t, want, positions(h.got()))
	}
}
