package natsbridge

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"

	"github.com/wsfan/wsfan/internal/format"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// Subscribe subscribes to topics of the group and returns once: NATS has
// registered the live interest, the group's wants bucket holds this
// member's wish for the topics (so the leader will subscribe upstream),
// and each topic's last value, if the group has one, is queued first on
// the subscription (when the cache cannot be read, the topic starts with
// the live stream, and a warning is logged). It does not wait for the
// leader: a topic the
// upstream refuses ends the subscription with a *client.RefusedError
// naming it.
func (m *Member) Subscribe(ctx context.Context, topics ...string) (*Subscription, error) {
	names, err := uniqueTopics(topics)
	if err != nil {
		return nil, err
	}
	return m.subscribeNames(ctx, names, nil)
}

// subscribeNames is Subscribe of distinct names, parsed (parsed[i] is
// names[i]) when the caller has them so: nil when not.
func (m *Member) subscribeNames(ctx context.Context, names []string, parsed []*protocol.Topic) (*Subscription, error) {
	ctx, cancel := m.withTimeout(ctx)
	defer cancel()

	s := newSubscription(m, names)
	s.parsed = parsed
	for _, t := range names {
		r := newTopicReader(s, m.subj.topic(t))
		s.readers = append(s.readers, r)
	}
	if err := m.subscribe(ctx, s); err != nil {
		s.finish(nil)
		return nil, fmt.Errorf("natsbridge: failed to subscribe %s: %w", format.QuotedList(names), err)
	}
	return s, nil
}

// SubscribeTopics subscribes each topic on its own (Subscribe), a
// stream each, for a client.Holder's reader (holder.go). A member asks
// the group for topics by name (the wants bucket), and the leader parses
// each once a term with its dialect (WithProtocol) before its upstream
// subscribes it, but for a topic a subscription of its own member handed
// over parsed: a topic is parsed once in each process, by the reader
// that wants it.
func (m *Member) SubscribeTopics(ctx context.Context, topics []*protocol.Topic) ([]client.Stream, []error, error) {
	streams, errs := make([]client.Stream, len(topics)), make([]error, len(topics))
	for i, topic := range topics {
		if s, err := m.subscribeNames(ctx, []string{topic.Name}, topics[i:i+1]); err != nil {
			errs[i] = err
		} else {
			streams[i] = s
		}
	}
	return streams, errs, nil
}

// UnsubscribeStreams ends each stream by its own Unsubscribe: a group
// subscription is left on NATS, and the leader unsubscribes upstream
// what no member wants any more. A stream already ended is not a
// failure.
func (m *Member) UnsubscribeStreams(ctx context.Context, streams []client.Stream) error {
	return client.UnsubscribeAll(ctx, streams)
}

// subscribe does Subscribe's steps for s, whose readers are set.
func (m *Member) subscribe(ctx context.Context, s *Subscription) error {
	if m.isClosed() {
		return ErrClosed
	}
	// The live interest goes first: whatever is published after the last
	// value is read is then already queued.
	for _, r := range s.readers {
		sub, err := m.nc.Subscribe(r.names.live, r.onMsg)
		if err != nil {
			return err
		}
		r.sub = sub
	}
	if err := m.nc.FlushWithContext(ctx); err != nil {
		return err
	}
	version := m.wants.add(s.topics, s.parsed)
	s.wanted.Store(true)
	if err := m.wants.wait(ctx, version); err != nil {
		return fmt.Errorf("announcing the topics: %w", err)
	}
	for _, r := range s.readers {
		var h nats.Header
		var data []byte
		if m.cfg.lastValue {
			msg, err := m.res.lvc.GetLastMsgForSubject(ctx, r.names.lvc)
			switch {
			case err == nil:
				h, data = msg.Header, msg.Data
			case errors.Is(err, jetstream.ErrMsgNotFound):
			default: // the live stream does not depend on the cache
				m.log.Warn("natsbridge: no last value", zap.String("topic", r.names.topic), zap.Error(err))
			}
		}
		r.start(h, data)
	}
	return m.register(s)
}

// uniqueTopics drops duplicates, keeping the order; an empty topic or
// none at all is an error.
func uniqueTopics(topics []string) ([]string, error) {
	if len(topics) == 0 {
		return nil, errors.New("natsbridge: subscribe to no topic")
	}
	seen := make(map[string]struct{}, len(topics))
	out := make([]string, 0, len(topics))
	for _, t := range topics {
		if t == "" {
			return nil, errors.New("natsbridge: empty topic")
		}
		if _, ok := seen[t]; !ok {
			seen[t] = struct{}{}
			out = append(out, t)
		}
	}
	return out, nil
}
