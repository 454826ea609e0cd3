package sidecar

import (
	"context"
	"errors"
	"fmt"

	"github.com/wsfan/wsfan/pkg/client"
)

// A reload's new list of upstream endpoints is given to the upstream
// client, which moves make before break (client.Client.SetEndpoints):
// the hub's streams go on across the move, so the local clients see
// nothing of it. The holders that cannot take a list say why here.

// Why a reload keeps the running endpoints of a holder that cannot take
// a new list.
var (
	errEndpointsStandby = errors.New("a hot standby's connections each keep the endpoint they were dialled to: change the upstream endpoints with a restart")
	errEndpointsGroup   = errors.New("in a NATS group the leader holds the upstream: change the upstream endpoints with a restart of each member")
)

// endpointList is cfg's upstream endpoints: Upstream, then Fallbacks.
func endpointList(cfg *Config) []string {
	return append([]string{cfg.Upstream}, cfg.Fallbacks...)
}

// reloadEndpoints gives urls to the upstream client, and returns why it
// did not take them (the running endpoints then stay). It returns once
// the move is done. Runs under reloadMu.
func (s *Server) reloadEndpoints(urls []string) error {
	switch {
	case s.applied.NATS != "":
		return errEndpointsGroup
	case s.applied.HotStandby > 0:
		return errEndpointsStandby
	}
	// ctx bounds the wait for the upstream client to exist (its first
	// dial attempt) and to take the request, not the move.
	ctx, cancel := context.WithTimeout(s.ctx, s.applied.RequestTimeout)
	defer cancel()
	h, err := s.src.feed(ctx)
	if err != nil {
		return fmt.Errorf("the upstream client is not up yet: %w", err)
	}
	es, ok := h.(client.EndpointSetter)
	if !ok {
		return fmt.Errorf("the upstream's holder (%T) cannot take a new list of endpoints: change them with a restart", h)
	}
	return es.SetEndpoints(ctx, urls...)
}
