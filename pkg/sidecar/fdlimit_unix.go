//go:build unix

package sidecar

import "syscall"

// descriptorLimit returns the process's limit on open files (the soft
// RLIMIT_NOFILE), or 0 when it cannot tell.
func descriptorLimit() uint64 {
	var l syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l) != nil {
		return 0
	}
	return l.Cur
}
