package main

import (
	"io"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// newLogger logs to w at level and up (a reload may change it): one JSON
// object per line for log shippers, or zap's console format with a short
// clock for people.
func newLogger(w io.Writer, format logFormat, level zap.AtomicLevel) *zap.Logger {
	var enc zapcore.Encoder
	if format == logJSON {
		cfg := zap.NewProductionEncoderConfig()
		cfg.EncodeTime = zapcore.RFC3339NanoTimeEncoder
		enc = zapcore.NewJSONEncoder(cfg)
	} else {
		cfg := zap.NewDevelopmentEncoderConfig()
		cfg.EncodeTime = zapcore.TimeEncoderOfLayout("15:04:05.000")
		enc = zapcore.NewConsoleEncoder(cfg)
	}
	return zap.New(zapcore.NewCore(enc, zapcore.Lock(zapcore.AddSync(w)), level))
}
