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

// frameBytes is how many raw bytes of records go in one zstd frame at
// most, before the flush interval ends.
const frameBytes = 1 << 20

// writer writes segments. It is owned by the Recorder's writer
// goroutine, except size, which mu lets Stats read.
type writer struct {
	dir  string
	opts Options
	enc  *zstd.Encoder

	man       Manifest
	manDue    time.Time
	conns     map[[2]uint64]bool
	seg       *os.File
	idx       *os.File
	sum       hash.Hash
	cur       *SegmentInfo // the open segment's entry in man.Segments
	opened    time.Time
	buf       []byte    // records not flushed yet
	bufFirst  time.Time // time of buf's first record
	scratch   []byte
	nextIndex int

	mu    sync.Mutex // protects segs and bytes, for Stats
	segs  int
	bytes int64
}

func openWriter(dir, venue string, opts Options) (*writer, error) {
	if err := checkDir(dir); err != nil {
		return nil, err
	}
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
	if err != nil {
		return nil, err
	}
	w := &writer{dir: dir, opts: opts, enc: enc, conns: make(map[[2]uint64]bool)}
	now := time.Now()
	w.man = Manifest{Version: ManifestVersion, Venue: venue, Started: now, Topics: make(map[string]int64)}
	if prev, err := ReadManifest(dir); err == nil && prev.Venue == venue {
		w.man.Started, w.man.Segments, w.man.Topics, w.man.Connections = prev.Started, prev.Segments, prev.Topics, prev.Connections
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
		if err := w.openSegment(r.Time); err != nil {
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
	if r.Topic != "" {
		w.man.Topics[r.Topic]++
	}
	if k := [2]uint64{r.Client, r.Conn}; !w.conns[k] {
		w.conns[k] = true
		if len(w.man.Connections) < maxConnections {
			w.man.Connections = append(w.man.Connections, ConnectionInfo{Client: r.Client, Conn: r.Conn, Endpoint: r.Endpoint, First: r.Time})
		}
	}
	if len(w.buf) >= frameBytes {
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

// flush writes the buffered records as one zstd frame and indexes it.
func (w *writer) flush() error {
	if len(w.buf) == 0 {
		return nil
	}
	w.scratch = w.enc.EncodeAll(w.buf, w.scratch[:0])
	offset := w.cur.Bytes
	if _, err := w.seg.Write(w.scratch); err != nil {
		return err
	}
	w.sum.Write(w.scratch)
	var entry [16]byte
	binary.LittleEndian.PutUint64(entry[:8], uint64(w.bufFirst.Unix()))
	binary.LittleEndian.PutUint64(entry[8:], uint64(offset))
	if _, err := w.idx.Write(entry[:]); err != nil {
		return err
	}
	w.cur.Bytes += int64(len(w.scratch))
	w.cur.Raw += int64(len(w.buf))
	w.cur.Frames++
	w.mu.Lock()
	w.bytes += int64(len(w.scratch)) + 16
	w.mu.Unlock()
	w.buf = w.buf[:0]
	if cap(w.buf) > 4*frameBytes {
		w.buf = nil
	}
	return nil
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
	w.seg, w.idx, w.sum, w.opened = seg, idx, sha256.New(), now
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
	w.cur.SHA256 = hex.EncodeToString(w.sum.Sum(nil))
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
