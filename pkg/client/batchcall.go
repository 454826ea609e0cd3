package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/bytedance/sonic"

	"github.com/wsfan/wsfan/internal/pending"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// BatchElem is one call of BatchCall.
type BatchElem struct {
	Method string
	// Params are the call's params, as Call takes them: nil, raw JSON
	// (json.RawMessage or []byte), or a value to encode.
	Params any
	// Result is where the result is decoded, as Call decodes it; nil
	// discards it.
	Result any
	// Error is the call's own outcome: nil, the server's *RPCError, or
	// why it got no answer.
	Error error
}

// BatchCall makes every call of batch and fills in each element's Result
// and Error, in the batch's order, as go-ethereum's BatchCallContext
// does. Where the dialect takes batch arrays (protocol.Venue.MaxBatch:
// Ethereum), the calls go out in arrays of at most the node's cap
// (ethereum.MaxBatch, or the smaller size a node was found to take: a
// "batch too large" refusal halves it, and the size is kept, as for
// subscribes), and calls a node answers "response too large" (-32003)
// go again in smaller arrays, alone at the last. Elsewhere every call is a
// request of its own, all written in one flush. The returned error is
// for the batch as a whole (no connection, a call not sent in time); a
// call's own is in its element. Every call waits for its answer within
// ctx and the request timeout, as Call does.
func (c *Client) BatchCall(ctx context.Context, batch []BatchElem) error {
	if len(batch) == 0 {
		return nil
	}
	cn, err := c.activeConn(ctx)
	if err != nil {
		return fmt.Errorf("batch call: %w", err)
	}
	calls := make([]protocol.Call, len(batch))
	todo := make([]int, 0, len(batch))
	for i := range batch {
		batch[i].Error = nil
		raw, err := encodeParams(batch[i].Params)
		if err != nil {
			batch[i].Error = fmt.Errorf("failed to encode params of %s: %w", batch[i].Method, err)
			continue
		}
		calls[i] = protocol.Call{Method: batch[i].Method, Params: raw}
		todo = append(todo, i)
	}
	ctx, cancel := c.withTimeout(ctx)
	defer cancel()
	answers := make([]pending.Response, len(batch))
	size := max(c.venue.MaxBatch, 1)
	for len(todo) > 0 {
		if learned := int(c.batchLimit.Load()); learned > 0 && learned < size {
			size = learned
		}
		again, err := c.batchRound(ctx, cn, calls, todo, size, answers)
		if err != nil {
			return fmt.Errorf("batch call: %w", err)
		}
		if len(again) > 0 && size == 1 {
			break // alone and still too large: the answer stands
		}
		todo, size = again, max(size/2, 1)
	}
	for i := range batch {
		if batch[i].Error == nil {
			batch[i].Error = c.decodeAnswer(batch[i], answers[i])
		}
	}
	return nil
}

// encodeParams encodes a call's params as Call does.
func encodeParams(params any) ([]byte, error) {
	switch p := params.(type) {
	case nil:
		return nil, nil
	case json.RawMessage:
		return p, nil
	case []byte:
		return p, nil
	}
	return sonic.Marshal(params)
}

// decodeAnswer decodes a call's answer into its Result, or returns its
// error.
func (c *Client) decodeAnswer(e BatchElem, r pending.Response) error {
	if r.Err != nil {
		return fmt.Errorf("call %s: %w", e.Method, r.Err)
	}
	if e.Result == nil {
		return nil
	}
	if rm, ok := e.Result.(*json.RawMessage); ok {
		*rm = r.Result
		return nil
	}
	if err := decodeInPlace(copying, r.Result, e.Result); err != nil {
		return fmt.Errorf("failed to decode result of %s: %w", e.Method, err)
	}
	return nil
}

// batchRound sends the calls of todo in frames of at most size calls
// (one request a frame where the venue takes no batch), waits for their answers into
// answers, and returns the calls to send again in smaller frames: those
// of a frame refused as too large (whose size it learns), and those
// answered "response too large".
func (c *Client) batchRound(ctx context.Context, cn *conn, calls []protocol.Call, todo []int, size int, answers []pending.Response) (again []int, err error) {
	type frame struct {
		idx []int // the calls, by index in the batch
		ids []uint64
		p   []*pending.Call
	}
	var frames []frame
	for start := 0; start < len(todo); start += size {
		f := frame{idx: todo[start:min(start+size, len(todo))]}
		f.ids = make([]uint64, len(f.idx))
		f.p = make([]*pending.Call, len(f.idx))
		part := make([]protocol.Call, len(f.idx))
		for j, i := range f.idx {
			f.ids[j] = c.nextID()
			f.p[j] = &pending.Call{Done: make(chan pending.Response, 1)}
			part[j] = calls[i]
		}
		var data []byte
		if len(part) > 1 {
			data, err = protocol.AppendBatch(c.proto, nil, f.ids, part)
		} else {
			data, err = c.proto.AppendRequest(nil, f.ids[0], part[0].Method, part[0].Params)
		}
		if err != nil {
			return nil, err
		}
		if p := c.cfg.pace; p != nil {
			if err := paceErr(ctx, p.WaitCosts(ctx, c.ctx, p.BatchCosts(part))); err != nil {
				return nil, err
			}
		}
		if err := cn.pending.AddAll(f.ids, f.p); err != nil {
			return nil, err
		}
		if err := cn.send(data, nil, 0); err != nil {
			cn.pending.RemoveAll(f.ids)
			return nil, err
		}
		frames = append(frames, f)
	}
	for _, f := range frames {
		for j, i := range f.idx {
			answers[i] = c.awaitAnswer(ctx, cn, f.ids[j], f.p[j])
			if j == 0 && len(f.idx) > 1 && c.batchTooLarge(answers[i].Err) {
				// The node answers a batch over its cap once, with the
				// first call's id: the others get no answer.
				c.learnBatchLimit(len(f.idx) / 2)
				cn.pending.RemoveAll(f.ids[1:])
				again = append(again, f.idx...)
				break
			}
			if c.responseTooLarge(answers[i].Err) {
				again = append(again, i)
			}
		}
	}
	return again, nil
}

// awaitAnswer waits for the answer of call id within ctx; a call whose
// wait ends is taken out of the pending table (and of the write queue,
// if it is still there).
func (c *Client) awaitAnswer(ctx context.Context, cn *conn, id uint64, p *pending.Call) pending.Response {
	select {
	case r := <-p.Done:
		return r
	case <-ctx.Done():
		if cn.pending.Remove(id) {
			err := ctxError(ctx, "no response")
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				err = fmt.Errorf("%w: no response within %v", ErrTimeout, c.cfg.requestTimeout.Round(time.Millisecond))
			}
			return pending.Response{Err: err}
		}
		return <-p.Done // the reader took it: its answer is on the way
	}
}

// responseTooLarge reports whether err is the dialect's refusal of a
// call's answer for the batch's response budget
// (protocol.ErrorClass.ResponseTooLarge).
func (c *Client) responseTooLarge(err error) bool {
	var rpcErr *RPCError
	return errors.As(err, &rpcErr) && c.classifyError(rpcErr.Code, rpcErr.Message).ResponseTooLarge
}
