// Package record keeps every frame an upstream connection carried, with
// the time it was read or written, and reads it back: the recording a
// replay server (cmd/replay) serves again as the venue.
//
// A Recorder is a client.FrameTap: give it to a Client (and so to every
// leg of a Pool or Standby) with client.WithFrameTap, or to a sidecar
// with Config.Record (-record DIR). It copies each frame on the
// connection's goroutine and hands it to a goroutine of its own, which
// classifies it with the venue's protocol (topic, kind, snapshot),
// redacts the credentials of frames written upstream, and writes it.
// Recording never slows delivery: when the writer falls behind (a slow
// or full disk) frames are dropped from the recording, counted
// (Recorder.Stats) and logged once, never held back from a program.
// Recorder.Flagged keeps what wsfan told a program with a message (a
// sidecar gives it each of its topics' messages that has a hole's flags).
//
// # Format
//
// A recording is a directory (0700) of files (0600):
//
//	manifest.json     versioned summary: venue, segments, topics, counts, connections
//	000001.wsrec      a segment: zstd frames, each of a minute of records at most
//	000001.wsidx      its index: 16-byte entries, unix second → frame offset
//
// A segment is a sequence of independent zstd frames, each holding up to
// a minute (or 16 MiB) of records, so that a feed's repeats within it
// compress; every flush interval (a second by default) the open frame's
// block is ended and written, and a reader decodes it at once: a process
// killed mid-frame loses at most what it had not flushed, and every
// block written before reads back. Each record is a uvarint length and
// then: direction (1 byte: 'R' received, 'W' sent, 'F' flagged), kind
// (the protocol.Kind), flags (bit 0: snapshot; a flagged record's:
// client.Flags), the time (8 bytes, unix
// nanoseconds, little-endian), the Client, connection and endpoint
// numbers (uvarints), the topic's routing key (uvarint length and
// bytes), and the frame, verbatim (sent frames redacted). A flagged
// record (Recorder.Flagged) is what wsfan told a program with a message
// it received: a hole (a reconnect, a gap, a stale topic, a backfill) or
// a reorganisation; it carries the message's receive time, which its
// frame's record has too, the topic's name and no frame, and is written
// only for messages that have such flags. An index entry
// is written at each flush: the unix second of its first record and the
// offset of the zstd frame holding it, both little-endian uint64; a
// reader starting at a time seeks to the last frame that begins no later
// and skips the records before it.
//
// Segments rotate by age and size; the oldest are deleted past a total
// size or age (Options). The manifest is rewritten at each rotation,
// every few seconds and on Close; a reader lists the segments itself, so
// a recording whose manifest is behind still reads whole.
package record
