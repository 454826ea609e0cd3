package natsbridge

import (
	"context"
	"errors"
	"strconv"

	"github.com/nats-io/nats.go"
	"go.uber.org/zap"

	"github.com/wsfan/wsfan/pkg/client"
)

// leaderTopic is a topic the leader follows upstream. Its goroutine
// (runTopic) is the only one that subscribes, reads and unsubscribes it
// upstream and publishes it; at most one runs per topic.
type leaderTopic struct {
	names   topicNames
	changed chan struct{} // capacity 1: wanted changed

	wanted bool // leader.mu protects it
}

// publisher is a topic's outgoing message, reused for every publish
// (nats.go copies it into its buffer). Owned by the topic's goroutine.
type publisher struct {
	names topicNames
	seq   uint64
	msg   nats.Msg
	seqV  []string // HeaderSeq's value slice, rewritten in place
	flagV []string // HeaderFlags' value slice
	recvV []string // HeaderRecvNs' value slice
	venV  []string // HeaderVenueNs' value slice
}

func newPublisher(names topicNames, epoch string, seq uint64) *publisher {
	p := &publisher{names: names, seq: seq, seqV: []string{""}, flagV: []string{""}, recvV: []string{""}, venV: []string{""}}
	p.msg.Subject = names.live
	p.msg.Header = nats.Header{HeaderEpoch: []string{epoch}, HeaderSeq: p.seqV}
	if names.hashed {
		p.msg.Header[HeaderTopic] = []string{names.topic}
	}
	return p
}

// stamp sets the stamp headers of m: its receive time (an upstream
// sidecar's when it came through one, as a sidecar forwards it) and the
// venue's stamp when it has one.
func (p *publisher) stamp(m client.Message) {
	recv := m.RecvTime
	if !m.UpstreamRecvTime.IsZero() {
		recv = m.UpstreamRecvTime
	}
	p.recvV[0] = strconv.FormatInt(recv.UnixNano(), 10)
	p.msg.Header[HeaderRecvNs] = p.recvV
	if m.ExchangeTime.IsZero() {
		delete(p.msg.Header, HeaderVenueNs)
		return
	}
	p.venV[0] = strconv.FormatInt(m.ExchangeTime.UnixNano(), 10)
	p.msg.Header[HeaderVenueNs] = p.venV
}

// runTopic follows one topic for as long as it is wanted in this term:
// take it as this process's member's subscription parsed it, or parse it
// with the group's dialect (once: every subscribe of the term hands the
// upstream the same parsed topic; one the dialect refuses is refused as
// the upstream would), subscribe upstream (retrying with backoff; waiting for the topic to be
// unwanted when the upstream refuses it), publish every message, and
// when it is no longer wanted unsubscribe upstream and clear its last
// value.
func (l *leader) runTopic(t *leaderTopic) {
	defer l.wg.Done()
	log := l.env.log.With(zap.String("topic", t.names.topic))
	l.mu.Lock()
	p := newPublisher(t.names, l.epoch, l.seqs[t.names.topic])
	l.mu.Unlock()
	bo := l.env.newBackoff()
	parsed, perr := l.env.parsedHere(t.names.topic), error(nil)
	if parsed == nil {
		if parsed, perr = l.env.proto.NewTopic(t.names.topic); perr != nil {
			perr = &client.RefusedError{Topics: []string{t.names.topic}, Cause: perr}
		}
	}
	for l.keep(t, p.seq) {
		if !l.fence.valid() { // the term ends within TTL/16
			<-l.ctx.Done()
			return
		}
		var feed client.Stream
		err := perr
		if err == nil {
			feed, err = subscribeOne(l.ctx, l.up, parsed)
		}
		if err == nil {
			bo.Reset()
			err = l.pump(t, p, feed)
		}
		switch {
		case l.ctx.Err() != nil:
			return
		case err == nil && !l.fence.valid(): // no longer wanted, and the term ends
			return
		case err == nil: // no longer wanted
			uctx, cancel := context.WithTimeout(l.ctx, l.env.reqTimeout)
			if uerr := feed.Unsubscribe(uctx); uerr != nil {
				log.Debug("natsbridge: upstream unsubscribe failed", zap.Error(uerr))
			}
			cancel()
			l.lvc.purge(t.names.lvc)
		case errors.Is(err, client.ErrRefused):
			log.Warn("natsbridge: upstream refused the topic", zap.Error(err))
			l.mu.Lock()
			l.refused[t.names.topic] = err.Error()
			l.mu.Unlock()
			l.publishRefusal(t.names, err.Error())
			l.waitUnwanted(t)
		default:
			wait := bo.NextBackOff()
			log.Warn("natsbridge: upstream subscription failed; retrying", zap.Error(err), zap.Duration("in", wait))
			if !sleep(l.ctx, wait) {
				return
			}
		}
	}
}

// keep reports whether t is still wanted. When it is not, t is removed
// under the same lock that setWanted takes, so a later want starts a new
// goroutine, and its sequence is kept for that one.
func (l *leader) keep(t *leaderTopic, seq uint64) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if t.wanted && l.ctx.Err() == nil {
		return true
	}
	delete(l.topics, t.names.topic)
	delete(l.refused, t.names.topic)
	l.seqs[t.names.topic] = seq
	return false
}

func (l *leader) isWanted(t *leaderTopic) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return t.wanted
}

// waitUnwanted waits until t is no longer wanted or the term ends.
func (l *leader) waitUnwanted(t *leaderTopic) {
	for l.isWanted(t) {
		select {
		case <-t.changed:
		case <-l.ctx.Done():
			return
		}
	}
}

// pump publishes feed's messages until t is no longer wanted (nil) or the
// feed ends (why it ended).
func (l *leader) pump(t *leaderTopic, p *publisher, feed client.Stream) error {
	for {
		select {
		case m, ok := <-feed.C():
			if !ok {
				if err := <-feed.Err(); err != nil {
					return err
				}
				return client.ErrConnectionLost // ended with no reason: follow it again
			}
			l.publish(p, m)
		case <-t.changed:
			if !l.isWanted(t) {
				return nil
			}
		case <-l.ctx.Done():
			return nil
		}
	}
}

// publish sends m on the topic's live subject and hands it to the
// last-value writer, unless the lease is no longer proven (fence): a
// message read after that is dropped, the term ending. Called by the
// topic's goroutine.
func (l *leader) publish(p *publisher, m client.Message) {
	if !l.fence.valid() {
		l.env.stats.fenced.Add(1)
		return
	}
	p.seq++
	p.seqV[0] = strconv.FormatUint(p.seq, 10)
	if m.Flags != 0 {
		p.flagV[0] = strconv.FormatUint(uint64(m.Flags), 10)
		p.msg.Header[HeaderFlags] = p.flagV
	} else {
		delete(p.msg.Header, HeaderFlags)
	}
	p.stamp(m)
	p.msg.Data = m.Data
	if err := l.env.nc.PublishMsg(&p.msg); err != nil {
		l.env.stats.publishErrors.Add(1)
	} else {
		l.env.stats.published.Add(1)
	}
	p.msg.Data = nil
	l.lvc.put(p.names.lvc, lvcValue{topic: p.names, seq: p.seq, data: m.Data})
}
