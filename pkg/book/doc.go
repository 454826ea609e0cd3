// Package book keeps local L2 order books by each exchange's rules, for
// programs using pkg/client and for the sidecar, which serves every local
// program a snapshot of its own book.
//
// An exchange package that has books registers its Rules (Register):
// pkg/deribit (book.{instrument}.{interval}, chained by prev_change_id;
// the grouped book.{instrument}.{group}.{depth}.{interval}, whole every
// time), pkg/thalex (book.{instrument}.{grouping}.{nlevels}.{delay}, the
// first notification marked "snapshot": true), pkg/ethereal
// (L2Book:{symbol}, the whole book first, then changes chained by pt) and
// pkg/okx (books:{instId}, books-l2-tbt:{instId} and
// books50-l2-tbt:{instId}, a snapshot then changes chained by prevSeqId;
// books5:{instId} and bbo-tbt:{instId}, whole every time).
// Import the exchange's package, then Follow a topic on a client:
//
//	b, err := book.Follow(ctx, c, "book.BTC-PERPETUAL.100ms")
//	...
//	bid, ask, ok := b.Best()
//
// A Book is valid from a snapshot until a break: a change that does not
// follow the last one, a crossed book, a message the rules cannot read,
// a book that fails the digest its message carries (Rules that are
// Verifying; Rules that are Truncating keep a subscribed depth), or a
// change after a hole in the stream (ApplyAfterGap: messages lost on the
// client's side, which a book whose changes name no predecessor, as
// Thalex's, cannot see itself). A broken book says so to every reader at once (ok is false),
// ignores changes until the next snapshot, and a Follower asks the
// exchange for that snapshot once a break (client.Client.Resync).
//
// Prices and sizes are Decimal: exact, fixed-point, 18 fractional digits
// in 128 bits, integer parts up to 1.7×10^20 (see Decimal for why not
// float64, an arbitrary-precision type or a scale per instrument).
package book
