package natsbridge

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// resources are a group's JetStream state: the leader lease, the topics
// every member wants, and the last-value cache.
type resources struct {
	lease    jetstream.KeyValue // key "leader": the member id; TTL = lease TTL
	wants    jetstream.KeyValue // key = member id: a JSON array of topics
	lvc      jetstream.Stream   // one message per subject wsfan.<group>.lvc.>
	leaseTTL time.Duration      // the lease bucket's TTL, which is the truth
	wantTTL  time.Duration      // the wants bucket's TTL
}

// bind finds the group's buckets and stream and, for a candidate, creates
// what is missing. A member that is not a candidate fails with
// ErrUnknownGroup when the group has never been created.
func bind(ctx context.Context, js jetstream.JetStream, group string, cfg *config) (resources, error) {
	var r resources
	var err error
	create := cfg.dial != nil
	if r.lease, err = bindKV(ctx, js, create, jetstream.KeyValueConfig{
		Bucket:      leaseBucket(group),
		Description: "wsfan leader lease of group " + group,
		History:     1,
		TTL:         cfg.leaseTTL,
		Storage:     jetstream.FileStorage,
		Replicas:    cfg.replicas,
	}); err != nil {
		return r, err
	}
	if r.wants, err = bindKV(ctx, js, create, jetstream.KeyValueConfig{
		Bucket:      wantsBucket(group),
		Description: "wsfan topics wanted by the members of group " + group,
		History:     1,
		TTL:         cfg.wantTTL,
		Storage:     jetstream.FileStorage,
		Replicas:    cfg.replicas,
	}); err != nil {
		return r, err
	}
	if r.lvc, err = bindLVC(ctx, js, group, create, cfg); err != nil {
		return r, err
	}
	if r.leaseTTL, err = bucketTTL(ctx, r.lease); err != nil {
		return r, err
	}
	if r.leaseTTL <= 0 {
		return r, fmt.Errorf("natsbridge: lease bucket %s has no TTL", leaseBucket(group))
	}
	if r.wantTTL, err = bucketTTL(ctx, r.wants); err != nil {
		return r, err
	}
	if r.wantTTL <= 0 {
		return r, fmt.Errorf("natsbridge: wants bucket %s has no TTL", wantsBucket(group))
	}
	return r, nil
}

func bindKV(ctx context.Context, js jetstream.JetStream, create bool, cfg jetstream.KeyValueConfig) (jetstream.KeyValue, error) {
	kv, err := js.KeyValue(ctx, cfg.Bucket)
	if err == nil || !errors.Is(err, jetstream.ErrBucketNotFound) {
		return kv, err
	}
	if !create {
		return nil, fmt.Errorf("%w: no bucket %s", ErrUnknownGroup, cfg.Bucket)
	}
	kv, err = js.CreateKeyValue(ctx, cfg)
	if errors.Is(err, jetstream.ErrBucketExists) { // another member created it first
		return js.KeyValue(ctx, cfg.Bucket)
	}
	return kv, err
}

func bindLVC(ctx context.Context, js jetstream.JetStream, group string, create bool, cfg *config) (jetstream.Stream, error) {
	name := lvcStream(group)
	s, err := js.Stream(ctx, name)
	if err == nil || !errors.Is(err, jetstream.ErrStreamNotFound) {
		return s, err
	}
	if !create {
		return nil, fmt.Errorf("%w: no stream %s", ErrUnknownGroup, name)
	}
	s, err = js.CreateStream(ctx, lvcConfig(group, cfg))
	if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
		return js.Stream(ctx, name)
	}
	return s, err
}

// lvcConfig is the last-value cache: one message per subject, read with
// direct gets (served by any replica).
func lvcConfig(group string, cfg *config) jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name:              lvcStream(group),
		Description:       "wsfan last value of each topic of group " + group,
		Subjects:          []string{newSubjects(group).lvc + ">"},
		MaxMsgsPerSubject: 1,
		Discard:           jetstream.DiscardOld,
		AllowDirect:       true,
		Storage:           cfg.lvcStorage,
		Replicas:          cfg.replicas,
	}
}

func bucketTTL(ctx context.Context, kv jetstream.KeyValue) (time.Duration, error) {
	st, err := kv.Status(ctx)
	if err != nil {
		return 0, err
	}
	return st.TTL(), nil
}

// ensureLVC creates the last-value stream when it is gone (a NATS server
// restarted without its memory streams, an operator deleted it).
func (m *Member) ensureLVC(ctx context.Context) error {
	_, err := bindLVC(ctx, m.js, m.subj.group, true, &m.cfg)
	return err
}
