package record

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/klauspost/compress/zstd"
)

// ReadManifest reads dir's manifest.json.
func ReadManifest(dir string) (Manifest, error) {
	var m Manifest
	data, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		return m, err
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return m, fmt.Errorf("manifest.json: %w", err)
	}
	if m.Version != ManifestVersion {
		return m, fmt.Errorf("manifest.json is of version %d: this reader reads version %d", m.Version, ManifestVersion)
	}
	return m, nil
}

// Window selects records by time: From included, To excluded; a zero
// bound is open.
type Window struct {
	From, To time.Time
}

// Holds reports whether t is within the window.
func (w Window) Holds(t time.Time) bool {
	return (w.From.IsZero() || !t.Before(w.From)) && (w.To.IsZero() || t.Before(w.To))
}

// ReadStats says what a read found.
type ReadStats struct {
	Records int
	// Truncated counts segments whose end did not decode: the last zstd
	// frame of a recording killed while writing it. The frames before it
	// were read.
	Truncated int
}

// Read calls fn with each record of dir within w, in the order they were
// recorded. The record's Frame belongs to fn only during the call. An
// error fn returns ends the read and is returned.
func Read(dir string, w Window, fn func(*Record) error) (ReadStats, error) {
	var st ReadStats
	names, err := segmentNames(dir)
	if err != nil {
		return st, err
	}
	if len(names) == 0 {
		return st, fmt.Errorf("no recording in %s: no segment (NNNNNN.wsrec)", dir)
	}
	for _, name := range names {
		truncated, err := readSegment(name, w, &st, fn)
		if truncated {
			st.Truncated++
		}
		if errors.Is(err, errPastWindow) {
			return st, nil
		}
		if err != nil {
			return st, err
		}
	}
	return st, nil
}

// errPastWindow ends a read at the first record after the window.
var errPastWindow = errors.New("past the window")

// readSegment reads one segment from the last indexed frame that starts
// no later than w.From. It reports whether its end failed to decode.
func readSegment(name string, w Window, st *ReadStats, fn func(*Record) error) (truncated bool, err error) {
	f, err := os.Open(name + ".wsrec")
	if err != nil {
		return false, err
	}
	defer func() { _ = f.Close() }()
	if off := startOffset(name+".wsidx", w.From); off > 0 {
		if _, err := f.Seek(off, io.SeekStart); err != nil {
			return false, err
		}
	}
	dec, err := zstd.NewReader(f, zstd.WithDecoderConcurrency(1))
	if err != nil {
		return false, err
	}
	defer dec.Close()
	br := bufio.NewReaderSize(dec, 64<<10)
	var buf []byte
	var rec Record
	names := make(map[string]string)
	for {
		n, err := binary.ReadUvarint(br)
		if errors.Is(err, io.EOF) {
			return false, nil
		}
		if err != nil {
			return true, nil // a frame cut short: what came before was read
		}
		if n > 64<<20 {
			return true, nil
		}
		if uint64(cap(buf)) < n {
			buf = make([]byte, n)
		}
		buf = buf[:n]
		if _, err := io.ReadFull(br, buf); err != nil {
			return true, nil
		}
		if err := decodeRecord(buf, &rec, names); err != nil {
			return true, nil
		}
		if !w.To.IsZero() && !rec.Time.Before(w.To.Add(time.Second)) {
			return false, errPastWindow // records of a second are in order within a second's slack
		}
		if !w.Holds(rec.Time) {
			continue
		}
		st.Records++
		if err := fn(&rec); err != nil {
			return false, err
		}
	}
}

// startOffset returns the offset of the last zstd frame the index says
// starts in a second no later than from's (0 to read from the start).
func startOffset(idxName string, from time.Time) int64 {
	if from.IsZero() {
		return 0
	}
	data, err := os.ReadFile(idxName)
	if err != nil {
		return 0
	}
	var off int64
	for i := 0; i+16 <= len(data); i += 16 {
		sec := int64(binary.LittleEndian.Uint64(data[i:]))
		if sec > from.Unix()-1 { // a frame's first record may be a moment before from
			break
		}
		off = int64(binary.LittleEndian.Uint64(data[i+8:]))
	}
	return off
}
