package main

// The exchanges the sidecar speaks: importing pkg/exchanges registers
// every exchange's dialect under its name for -protocol. Adding an
// exchange to the binary is one line there.
import _ "github.com/wsfan/wsfan/pkg/exchanges"

// defaultProtocol is -protocol's default.
const defaultProtocol = "thalex"
