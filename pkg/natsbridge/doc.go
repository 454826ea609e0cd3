// Package natsbridge shares one upstream connection among many processes
// on many machines through NATS, with failover: the processes form a
// group, exactly one of them (the leader) holds the upstream connection
// and publishes what it receives to NATS, and every member, the leader
// included, consumes the group's topics from NATS.
//
//	nc, _ := nats.Connect(url, nats.MaxReconnects(-1), nats.ReconnectBufSize(-1))
//	m, err := natsbridge.Join(ctx, nc, "deribit-main",
//		natsbridge.WithUpstream(natsbridge.DialClient("wss://...", client.WithProtocol(deribit.Protocol()))),
//		natsbridge.WithProtocol(deribit.Protocol())) // the leader parses the group's topics with it
//	defer m.Close()
//	sub, err := m.Subscribe(ctx, "book.BTC-PERPETUAL.100ms")
//	for msg := range sub.C() { /* a client.Message: Topic, Data, Seq, Flags */ }
//
// A member given no upstream (a program using the SDK, say) never leads:
// it only subscribes and calls.
//
// # NATS layout of group G
//
//	wsfan.G.t.<topic>     live messages, core NATS (never JetStream)
//	wsfan.G.lvc.<topic>   last value of each topic: stream wsfan_G_lvc, one message per subject
//	wsfan.G.rpc           calls to the leader, request/reply
//	wsfan.G.leader        the leader's report of its upstream, every TTL/8 (HeaderUpstream)
//	KV wsfan_G_lease      key "leader": the leader's id; the bucket's TTL is the lease TTL
//	KV wsfan_G_wants      key <member id>: the JSON array of topics the member wants
//
// <topic> is EncodeTopic's form of the topic. Live and last-value
// messages carry the headers Wsfan-Seq, Wsfan-Epoch and, when they apply,
// Wsfan-Flags and Wsfan-Topic (see HeaderSeq); live messages also carry
// the leader's receive time, Wsfan-Recv-Ns, and the venue's stamp,
// Wsfan-Venue-Ns, when there is one (see HeaderRecvNs).
//
// # Goroutines
//
// A member runs an announcer goroutine (its wanted topics into the wants
// bucket) and, when it is a candidate, a candidate goroutine (the
// election, the lease renewals while it leads, and the probes of its own
// path after it yielded a dead upstream). A term of leadership runs one
// goroutine that dials the upstream, serves calls and, when the term
// ends, drops the upstream first; a watcher that reports the upstream's
// state and ends the term when it stays down; one that follows the wants
// bucket; one per followed topic (the only reader of that topic's
// upstream feed and the only publisher of its subject); a last-value
// writer; and one per forwarded call. Each topic of a Subscription is
// read by the goroutine nats.go runs for its NATS subscription.
//
// # Invariants
//
//   - At most one member uses the upstream: a member dials only after it
//     created the lease key and renews it by compare-and-swap every
//     TTL/4. It publishes, forwards a call, subscribes or unsubscribes
//     only while its own clock proves the lease (the last successful
//     write's send time plus TTL/2, fence.go), and when no renewal
//     succeeded for TTL/2 it closes its upstream before doing anything
//     else. The one overlap left is a process stopped (SIGSTOP, a VM
//     paused) for longer than 3/4 TTL: its connection stays open, unused,
//     until the process runs again and closes it, at most the freeze
//     minus 3/4 TTL after its successor dialled (measured by make
//     nats-frozen: 3.7 s for a 5 s freeze with TTL 1 s).
//   - A leader whose upstream stays down for WithYieldAfter releases the
//     lease, and campaigns again only once a probe of its own path
//     connects, so a member whose path works takes over.
//   - Epochs grow: a term's epoch is the revision of the lease key it
//     created, and revisions only grow, so a later leader has a higher
//     epoch. A consumer drops a message of a lower epoch than one it has
//     accepted for the topic.
//   - Per topic, a consumer delivers in the leader's order with no
//     duplicate: the live interest is registered before the last value is
//     read, the last value goes first, and the live messages it already
//     contains are dropped by sequence. The cache is written in rounds and
//     may lag the live subject; what it misses went out before the
//     consumer's interest existed, so the first live message after the
//     last value moves Message.Seq by one and is not flagged as a gap.
//   - Every hole a consumer can see is flagged on the next message: a new
//     leader's first (FlagReconnected), a jump in sequence (FlagGap), and
//     the first of a run of live messages that arrive more than
//     WithLateAfter after the leader read them (FlagStale: a NATS link
//     that stalled and healed without a reconnect).
//   - The live path never waits on JetStream: a publisher only replaces
//     the topic's pending last value, which the last-value writer stores
//     in rounds.
//   - A topic's sequence never restarts within a term, even when it is
//     unsubscribed and subscribed again upstream, and its last value is
//     cleared when it is unsubscribed, so a stale value is never served
//     as current.
package natsbridge
