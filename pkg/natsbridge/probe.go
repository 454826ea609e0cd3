package natsbridge

import (
	"context"
	"time"

	"github.com/cenkalti/backoff/v4"
	"go.uber.org/zap"

	"github.com/wsfan/wsfan/pkg/client"
)

// Probing a member's own path after it yielded the lease.
const (
	// probeTimeout bounds one probe's dial.
	probeTimeout = 10 * time.Second
	// probeMax is the longest wait between two probes.
	probeMax = 10 * time.Second
)

// probePath runs on the candidate goroutine after a term ended because
// the upstream stayed down. The member does not campaign while its own
// path is not known to work: it dials the upstream once (the connection
// is closed at once) after the lease TTL, then again with backoff
// doubling up to probeMax, ±50% jitter, until a dial connects; it
// reports whether one did (false: the member is closing). Members that
// never led are presumed to reach the upstream and learn otherwise only
// by leading, so while one of them can take over, only it dials as the
// leader, and each member cut off from the upstream adds one short
// connection a probe interval.
func (m *Member) probePath(ctx context.Context) bool {
	m.pathDown.Store(true)
	defer m.pathDown.Store(false)
	bo := backoff.NewExponentialBackOff()
	bo.InitialInterval = m.res.leaseTTL
	bo.RandomizationFactor = 0.5
	bo.Multiplier = 2
	bo.MaxInterval = max(probeMax, m.res.leaseTTL)
	bo.MaxElapsedTime = 0
	bo.Reset()
	for attempt := 1; ; attempt++ {
		if !sleep(ctx, bo.NextBackOff()) {
			return false
		}
		dctx, cancel := context.WithTimeout(ctx, probeTimeout)
		up, err := m.cfg.dial(dctx)
		cancel()
		if err == nil {
			connected := up.State() == client.StateConnected
			_ = up.Close()
			if connected {
				m.log.Info("natsbridge: the upstream answers again; campaigning", zap.Int("probes", attempt))
				return true
			}
		}
		if ctx.Err() != nil {
			return false
		}
		m.log.Debug("natsbridge: upstream probe failed", zap.Int("attempt", attempt), zap.Error(err))
	}
}
