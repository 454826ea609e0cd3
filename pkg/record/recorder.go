package record

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// Options tune a Recorder; every zero field takes its default.
type Options struct {
	// Flush is the longest a recorded frame waits before it is written
	// to the segment (a zstd frame of its own): the most a crash loses.
	// Default: 1s.
	Flush time.Duration
	// SegmentAge and SegmentBytes rotate the open segment. Default: 1h,
	// 256 MiB.
	SegmentAge   time.Duration
	SegmentBytes int64
	// MaxAge and MaxBytes delete the oldest segments past them. Default:
	// none, 10 GiB.
	MaxAge   time.Duration
	MaxBytes int64
	// Private records the notifications of private topics and the answers
	// to calls that are not read-only, which are left out by default:
	// they carry account data.
	Private bool
	// Queue bounds the frames waiting for the writer, in bytes: past it,
	// frames are dropped from the recording and counted. Default: 64 MiB.
	Queue int64
	// Logger logs the first drop and write failures. Default: none.
	Logger *zap.Logger
}

func (o *Options) defaults() {
	set := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	set(&o.Flush, time.Second)
	set(&o.SegmentAge, time.Hour)
	if o.SegmentBytes <= 0 {
		o.SegmentBytes = 256 << 20
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = 10 << 30
	}
	if o.Queue <= 0 {
		o.Queue = 64 << 20
	}
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
}

// Stats are a Recorder's counters.
type Stats struct {
	Recorded uint64 // frames written to segments
	Dropped  uint64 // frames not recorded: the writer was behind, or failed
	Left     uint64 // frames left out by choice: private data (Options.Private)
	Segments int    // segments on disk
	Bytes    int64  // their size
}

// Recorder records the frames of the connections it taps
// (client.FrameTap) into a directory. The tapping goroutines copy each
// frame and queue it; the Recorder's writer goroutine owns everything
// else.
type Recorder struct {
	opts  Options
	proto protocol.Protocol
	q     *queue
	done  chan struct{}
	wg    sync.WaitGroup

	dropped, recorded, left atomic.Uint64
	dropLogged              atomic.Bool

	closed atomic.Bool // frames tapped after Close are dropped

	// Owned by the writer goroutine.
	w *writer
}

// New starts a Recorder writing into dir (made 0700 if missing) the
// frames of a venue spoken with proto.
func New(dir string, proto protocol.Protocol, opts Options) (*Recorder, error) {
	opts.defaults()
	w, err := openWriter(dir, proto.Name(), opts)
	if err != nil {
		return nil, err
	}
	r := &Recorder{opts: opts, proto: proto, q: newQueue(opts.Queue), done: make(chan struct{}), w: w}
	r.wg.Add(1)
	go r.run()
	return r, nil
}

// FrameRead implements client.FrameTap: it queues a copy of frame.
func (r *Recorder) FrameRead(c client.ConnInfo, frame []byte, at time.Time) {
	r.offer(Record{Time: at, Dir: Received, Client: c.Client, Conn: c.Conn, Endpoint: c.Endpoint, Frame: frame})
}

// FrameWritten implements client.FrameTap: it queues a copy of frame.
func (r *Recorder) FrameWritten(c client.ConnInfo, frame []byte, at time.Time) {
	r.offer(Record{Time: at, Dir: Sent, Client: c.Client, Conn: c.Conn, Endpoint: c.Endpoint, Frame: frame})
}

// offer queues rec with a copy of its frame, or drops it when the writer
// is behind. It never blocks.
func (r *Recorder) offer(rec Record) {
	if r.closed.Load() {
		r.dropped.Add(1)
		return
	}
	if !r.q.offer(&rec) {
		r.drop("the recorder's writer is behind (a slow or full disk?)")
	}
}

// drop counts a frame not recorded, logging the first.
func (r *Recorder) drop(why string) {
	r.dropped.Add(1)
	if r.dropLogged.CompareAndSwap(false, true) {
		r.opts.Logger.Warn("recording dropped a frame; later drops are only counted (Recorder.Stats, the status page)", zap.String("why", why))
	}
}

// run is the writer goroutine: it classifies, filters, redacts and
// writes the queued frames, flushing at least every Options.Flush.
func (r *Recorder) run() {
	defer r.wg.Done()
	tick := time.NewTicker(r.opts.Flush)
	defer tick.Stop()
	var f protocol.Frame
	private := newPrivacy(r.proto, r.opts.Private)
	var data []byte
	var recs []queued
	drain := func() {
		data, recs = r.q.take(data, recs)
		for i := range recs {
			rec := recs[i].record(data)
			r.handle(&rec, &f, private)
		}
	}
	for {
		select {
		case <-r.q.wake:
			drain()
		case <-tick.C:
			drain()
			if err := r.w.tick(time.Now()); err != nil {
				r.failed(err)
			}
		case <-r.done:
			drain()
			if err := r.w.close(); err != nil {
				r.opts.Logger.Warn("recording: closing the last segment failed", zap.Error(err))
			}
			return
		}
	}
}

// handle records one queued frame.
func (r *Recorder) handle(rec *Record, f *protocol.Frame, private *privacy) {
	if !r.prepare(rec, f, private) {
		r.left.Add(1)
		return
	}
	if err := r.w.add(rec); err != nil {
		r.failed(err)
		return
	}
	r.recorded.Add(1)
}

// prepare classifies a read frame (topic, kind, snapshot) and redacts a
// written one; it reports whether the frame is recorded (privacy).
func (r *Recorder) prepare(rec *Record, f *protocol.Frame, p *privacy) bool {
	switch rec.Dir {
	case Flagged:
		return p.keepTopic(rec.Topic)
	case Sent:
		p.sent(rec.Frame)
		rec.Frame = redactFrame(rec.Frame)
		return true
	}
	f.Reset()
	if r.proto.Classify(rec.Frame, f) != nil {
		return true // recorded as the venue sent it: a replay shows it too
	}
	rec.Kind, rec.Snapshot = f.Kind, f.Snapshot
	if f.Kind == protocol.KindNotification || f.Kind == protocol.KindEvent {
		rec.Topic = string(f.Key)
	}
	if !p.keep(rec, f) {
		return false
	}
	if f.Kind == protocol.KindResponse || f.Kind == protocol.KindBatch {
		// A login's answer holds tokens (Deribit's access_token), kept
		// with Options.Private: redacted as a sent login is.
		rec.Frame = redactFrame(rec.Frame)
	}
	return true
}

// failed counts a write failure as a drop and logs it.
func (r *Recorder) failed(err error) {
	r.dropped.Add(1)
	r.opts.Logger.Warn("recording: a write failed; frames are dropped from the recording until one succeeds", zap.Error(err))
}

// Stats returns the Recorder's counters.
func (r *Recorder) Stats() Stats {
	segs, size := r.w.size()
	return Stats{Recorded: r.recorded.Load(), Dropped: r.dropped.Load(), Left: r.left.Load(), Segments: segs, Bytes: size}
}

// Close writes what is queued, closes the segment and writes the
// manifest. Frames tapped after Close are dropped.
func (r *Recorder) Close() error {
	if r.closed.Swap(true) {
		return nil
	}
	r.q.shutdown()
	close(r.done)
	r.wg.Wait()
	return nil
}

// checkDir makes dir 0700 when it does not exist and refuses one others
// may read.
func checkDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("failed to make the recording directory: %w", err)
	}
	st, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	if st.Mode().Perm()&0o077 != 0 {
		return errors.New("the recording directory " + dir + " is open to others (mode " + st.Mode().Perm().String() + "): want 0700, chmod 700 it")
	}
	return nil
}
