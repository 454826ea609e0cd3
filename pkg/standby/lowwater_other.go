//go:build !linux

package standby

// setLowWater does nothing where the receive low-water mark does not keep
// a socket from waking the poller (trail.go): the pause alone holds.
func setLowWater(fd uintptr, n int) {}
