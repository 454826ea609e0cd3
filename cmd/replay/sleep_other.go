//go:build !linux

package main

import "time"

// sleep is time.Sleep where nanosleep(2) is not used (pace.go).
func sleep(d time.Duration) { time.Sleep(d) }
