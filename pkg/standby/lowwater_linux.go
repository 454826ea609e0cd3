package standby

import "syscall"

// setLowWater sets socket fd's receive low-water mark (SO_RCVLOWAT) to n
// bytes: TCP reports the socket readable, to epoll, only once n bytes
// wait (tcp(7)). A failure leaves the mark where it was, which costs
// wake-ups, not frames.
func setLowWater(fd uintptr, n int) {
	_ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVLOWAT, n)
}
