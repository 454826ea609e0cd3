package record

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/klauspost/compress/zstd"
)

// ManifestVersion is the version of the format manifest.json describes.
const ManifestVersion = 1

// Manifest describes a recording (manifest.json).
type Manifest struct {
	Version  int              `json:"version"`
	Venue    string           `json:"venue"`
	Started  time.Time        `json:"started"`
	Updated  time.Time        `json:"updated"`
	Segments []SegmentInfo    `json:"segments"`
	Topics   map[string]int64 `json:"topics"` // records a routing key
	// Flagged counts the Flagged records: the messages a program was
	// told of a hole (a reconnect, a gap, a stale topic) with.
	Flagged int64 `json:"flagged,omitempty"`
	// Connections lists each connection seen, with its first record:
	// a reconnect (or a standby's leg) is a connection of its own.
	Connections []ConnectionInfo `json:"connections"`
}

// SegmentInfo describes one segment.
type SegmentInfo struct {
	Name    string    `json:"name"`
	First   time.Time `json:"first"`
	Last    time.Time `json:"last"`
	Records int64     `json:"records"`
	Bytes   int64     `json:"bytes"`
	Frames  int       `json:"frames"` // zstd frames
	Raw     int64     `json:"raw_bytes"`
	// SHA256 is the segment file's digest, set once it is closed.
	SHA256 string `json:"sha256,omitempty"`
}

// ConnectionInfo is one connection a recording holds frames of.
type ConnectionInfo struct {
	Client   uint64    `json:"client"`
	Conn     uint64    `json:"conn"`
	Endpoint int       `json:"endpoint"`
	First    time.Time `json:"first"`
}

// maxConnections bounds the connections a manifest lists.
const maxConnections = 1000

// A zstd frame holds the records of frameSpan, or frameRaw bytes of
// them, whichever comes first; within it each flush ends a block, which
// a reader decodes as soon as it is written: a crash loses what was not
// flushed, and the frame's window spans a minute of a feed's repeats
// (the demo's feed, random prices, stored at 23 % of its raw size in a
// frame a second, 19 % in a frame a minute at zstd's "better" level,
// which costs the writer no more than its fastest on so little). A new
// frame is where a reader may start (the index).
const (
	frameSpan = time.Minute
	frameRaw  = 16 << 20
	// bufBytes is how many raw bytes of records wait for the flush
	// interval at most.
	bufBytes = 1 << 20
)

// writer writes segments. It is owned by the Recorder's writer
// goroutine, except size, which mu lets Stats read.
type writer struct {
	dir  string
	opts Options
	enc  *zstd.Encoder // streaming into out; nil between frames
	zenc *zstd.Encoder // the one encoder, reset for each frame (its tables and window are most of a Recorder's memory)
	out  countingWriter

	man        Manifest
	manDue     time.Time
	conns      map[[2]uint64]bool
	seg        *os.File
	idx        *os.File
	cur        *SegmentInfo // the open segment's entry in man.Segments
	opened     time.Time
	buf        []byte    // records not flushed yet
	bufFirst   time.Time // time of buf's first record
	frameStart int64     // offset of the open zstd frame
	frameAt    time.Time // when it was started
	frameRawN  int64     // raw bytes in it
	nextIndex  int

	mu    sync.Mutex // protects segs and bytes, for Stats
	segs  int
	bytes int64
}

func openWriter(dir, venue string, opts Options) (*writer, error) {
	if err := checkDir(dir); err != nil {
		return nil, err
	}
	w := &writer{dir: dir, opts: opts, conns: make(map[[2]uint64]bool)}
	now := time.Now()
	w.man = Manifest{Version: ManifestVersion, Venue: venue, Started: now, Topics: make(map[string]int64)}
	if prev, err := ReadManifest(dir); err == nil && prev.Venue == venue {
		w.man.Started, w.man.Segments, w.man.Topics, w.man.Connections, w.man.Flagged = prev.Started, prev.Segments, prev.Topics, prev.Connections, prev.Flagged
	}
	names, err := segmentNames(dir)
	if err != nil {
		return nil, err
	}
	w.nextIndex = 1
	if len(names) > 0 { // a recording resumed in the same directory goes on after its last segment
		last, err := strconv.Atoi(filepath.Base(names[len(names)-1]))
		if err != nil {
			return nil, fmt.Errorf("segment %s: %w", names[len(names)-1], err)
		}
		w.nextIndex = last + 1
	}
	w.refreshSize()
	return w, nil
}

// add buffers a record, flushing the buffer when it is full.
func (w *writer) add(r *Record) error {
	if w.seg == nil {
		// Aged by the clock tick reads (a record's time is the
		// client's, which may be another: WithReadClock, a simulation).
		if err := w.openSegment(time.Now()); err != nil {
			return err
		}
	}
	if len(w.buf) == 0 {
		w.bufFirst = r.Time
	}
	w.buf = appendRecord(w.buf, r)
	w.cur.Records++
	if w.cur.First.IsZero() {
		w.cur.First = r.Time
	}
	w.cur.Last = r.Time
	switch {
	case r.Dir == Flagged:
		w.man.Flagged++
		return w.flushIfFull() // a message's flags, of no connection of its own
	case r.Topic != "":
		w.man.Topics[r.Topic]++
	}
	if k := [2]uint64{r.Client, r.Conn}; len(w.man.Connections) < maxConnections && !w.conns[k] {
		w.conns[k] = true // as many as the manifest lists, at most
		w.man.Connections = append(w.man.Connections, ConnectionInfo{Client: r.Client, Conn: r.Conn, Endpoint: r.Endpoint, First: r.Time})
	}
	return w.flushIfFull()
}

// flushIfFull flushes the buffer once it holds bufBytes.
func (w *writer) flushIfFull() error {
	if len(w.buf) >= bufBytes {
		return w.flush()
	}
	return nil
}

// tick flushes what waits, rotates an old or large segment and rewrites
// the manifest when it is due.
func (w *writer) tick(now time.Time) error {
	if err := w.flush(); err != nil {
		return err
	}
	if w.seg != nil && (now.Sub(w.opened) >= w.opts.SegmentAge || w.cur.Bytes >= w.opts.SegmentBytes) {
		if err := w.closeSegment(); err != nil {
			return err
		}
		if err := w.retain(now); err != nil {
			return err
		}
	}
	if now.After(w.manDue) {
		w.manDue = now.Add(5 * time.Second)
		return w.writeManifest(now)
	}
	return nil
}

// flush writes the buffered records into the open zstd frame (starting
// one if none is open), ends the block so that it reads back now, and
// indexes it; it ends the frame once it is frameSpan old or frameRaw
// large.
func (w *writer) flush() error {
	if len(w.buf) == 0 {
		return nil
	}
	if w.enc == nil {
		if w.zenc == nil {
			enc, err := zstd.NewWriter(&w.out, zstd.WithEncoderLevel(zstd.SpeedBetterCompression), zstd.WithEncoderConcurrency(1))
			if err != nil {
				return err
			}
			w.zenc = enc
		} else {
			w.zenc.Reset(&w.out)
		}
		w.enc, w.frameStart, w.frameAt, w.frameRawN = w.zenc, w.out.n, w.bufFirst, 0
		w.cur.Frames++
	}
	if _, err := w.enc.Write(w.buf); err != nil {
		return err
	}
	if err := w.enc.Flush(); err != nil {
		return err
	}
	var entry [16]byte
	binary.LittleEndian.PutUint64(entry[:8], uint64(w.bufFirst.Unix()))
	binary.LittleEndian.PutUint64(entry[8:], uint64(w.frameStart))
	if _, err := w.idx.Write(entry[:]); err != nil {
		return err
	}
	w.frameRawN += int64(len(w.buf))
	w.cur.Raw += int64(len(w.buf))
	w.buf = w.buf[:0]
	if cap(w.buf) > 4*bufBytes {
		w.buf = nil
	}
	if w.bufFirst.Sub(w.frameAt) >= frameSpan || w.frameRawN >= frameRaw {
		return w.endFrame()
	}
	w.account()
	return nil
}

// endFrame ends the open zstd frame: the next flush starts another,
// where a reader may start.
func (w *writer) endFrame() error {
	if w.enc == nil {
		return nil
	}
	err := w.enc.Close()
	w.enc = nil
	w.account()
	return err
}

// account notes the segment's size, for the manifest and Stats.
func (w *writer) account() {
	grown := w.out.n - w.cur.Bytes
	w.cur.Bytes = w.out.n
	w.mu.Lock()
	w.bytes += grown
	w.mu.Unlock()
}

// countingWriter is the open segment file, counting and hashing what is
// written to it.
type countingWriter struct {
	f   *os.File
	sum hash.Hash
	n   int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.f.Write(p)
	c.sum.Write(p[:n])
	c.n += int64(n)
	return n, err
}

// openSegment starts the next segment.
func (w *writer) openSegment(now time.Time) error {
	name := fmt.Sprintf("%06d", w.nextIndex)
	w.nextIndex++
	seg, err := os.OpenFile(filepath.Join(w.dir, name+".wsrec"), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	idx, err := os.OpenFile(filepath.Join(w.dir, name+".wsidx"), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		_ = seg.Close()
		return err
	}
	w.seg, w.idx, w.opened = seg, idx, now
	w.out = countingWriter{f: seg, sum: sha256.New()}
	w.man.Segments = append(w.man.Segments, SegmentInfo{Name: name})
	w.cur = &w.man.Segments[len(w.man.Segments)-1]
	w.mu.Lock()
	w.segs++
	w.mu.Unlock()
	return w.writeManifest(now)
}

// closeSegment flushes and closes the open segment, noting its digest.
func (w *writer) closeSegment() error {
	if w.seg == nil {
		return nil
	}
	err := w.flush()
	if ferr := w.endFrame(); err == nil {
		err = ferr
	}
	w.cur.SHA256 = hex.EncodeToString(w.out.sum.Sum(nil))
	if cerr := w.seg.Close(); err == nil {
		err = cerr
	}
	if cerr := w.idx.Close(); err == nil {
		err = cerr
	}
	w.seg, w.idx, w.cur = nil, nil, nil
	return err
}

// retain deletes the oldest closed segments past Options.MaxBytes or
// MaxAge.
func (w *writer) retain(now time.Time) error {
	w.refreshSize()
	for len(w.man.Segments) > 0 {
		oldest := w.man.Segments[0]
		w.mu.Lock()
		total := w.bytes
		w.mu.Unlock()
		tooOld := w.opts.MaxAge > 0 && now.Sub(oldest.Last) > w.opts.MaxAge
		if (total <= w.opts.MaxBytes && !tooOld) || (w.cur != nil && oldest.Name == w.cur.Name) {
			break
		}
		for _, ext := range []string{".wsrec", ".wsidx"} {
			if err := os.Remove(filepath.Join(w.dir, oldest.Name+ext)); err != nil && !os.IsNotExist(err) {
				return err
			}
		}
		w.man.Segments = w.man.Segments[1:]
		w.refreshSize()
	}
	return nil
}

// refreshSize counts the segments on disk and their bytes.
func (w *writer) refreshSize() {
	names, _ := segmentNames(w.dir)
	var total int64
	for _, n := range names {
		for _, ext := range []string{".wsrec", ".wsidx"} {
			if st, err := os.Stat(n + ext); err == nil {
				total += st.Size()
			}
		}
	}
	w.mu.Lock()
	w.segs, w.bytes = len(names), total
	w.mu.Unlock()
}

func (w *writer) size() (int, int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.segs, w.bytes
}

// writeManifest replaces manifest.json (a new file renamed over it).
func (w *writer) writeManifest(now time.Time) error {
	w.man.Updated = now
	data, err := json.MarshalIndent(&w.man, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(w.dir, "manifest.json.tmp")
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(w.dir, "manifest.json"))
}

// close flushes and closes the open segment and writes the manifest.
func (w *writer) close() error {
	err := w.closeSegment()
	if merr := w.writeManifest(time.Now()); err == nil {
		err = merr
	}
	return err
}

// segmentNames lists dir's segments, oldest first, as paths without
// their extension.
func segmentNames(dir string) ([]string, error) {
	matches, err := filepath.Glob(filepath.Join(dir, "[0-9][0-9][0-9][0-9][0-9][0-9].wsrec"))
	if err != nil {
		return nil, err
	}
	out := make([]string, len(matches))
	for i, m := range matches {
		out[i] = m[:len(m)-len(".wsrec")]
	}
	return out, nil // Glob sorts: the names are fixed-width numbers
}
