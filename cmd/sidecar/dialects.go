package main

// The exchanges the sidecar speaks: importing an exchange package
// registers its dialect under its name for -protocol. Adding an exchange
// to the binary is one line here.
import (
	_ "github.com/wsfan/wsfan/pkg/deribit"
	_ "github.com/wsfan/wsfan/pkg/ethereal"
	_ "github.com/wsfan/wsfan/pkg/ethereum"
	_ "github.com/wsfan/wsfan/pkg/okx"
	_ "github.com/wsfan/wsfan/pkg/thalex"
)

// defaultProtocol is -protocol's default.
const defaultProtocol = "thalex"
