package main

import (
	"net"
	"sync"
	"time"

	"go.uber.org/zap"
)

// Readiness for systemd (a unit of Type=notify, as
// deploy/systemd/wsfan-sidecar.service is): sd_notify(3)'s protocol, one
// datagram "READY=1" to the unix socket $NOTIFY_SOCKET names (a leading @
// is Linux's abstract namespace, which Go's net package reads as such).
// Written here rather than imported from github.com/coreos/go-systemd
// because it is one datagram, and this binary's module is the SDK's: a
// module the binary alone needs would be in every SDK user's module graph.

// notifyPoll is how often the notifier asks whether the sidecar is ready.
const notifyPoll = 100 * time.Millisecond

// notifyWhenReady tells systemd the sidecar is ready, once, when ready
// first reports true (the upstream is connected: sidecar.Server.Ready),
// so a unit ordered After= this one starts only once it serves live
// data. Without a socket (not started by systemd) it does nothing. Its
// goroutine asks ready every notifyPoll until it sends; stop ends it and
// waits for it.
func notifyWhenReady(socket string, ready func() bool, log *zap.Logger) (stop func()) {
	if socket == "" {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // the notifier: owns the socket's connection
		defer wg.Done()
		t := time.NewTicker(notifyPoll)
		defer t.Stop()
		for !ready() {
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
		if err := sdNotify(socket, "READY=1"); err != nil {
			log.Warn("failed to tell systemd the sidecar is ready (NOTIFY_SOCKET)", zap.Error(err))
			return
		}
		log.Info("told systemd the sidecar is ready: the upstream is connected")
	}()
	return func() {
		close(done)
		wg.Wait()
	}
}

// sdNotify sends state to the notify socket.
func sdNotify(socket, state string) error {
	c, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: socket, Net: "unixgram"})
	if err != nil {
		return err
	}
	_, err = c.Write([]byte(state))
	if cerr := c.Close(); err == nil {
		err = cerr
	}
	return err
}
