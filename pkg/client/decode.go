package client

import (
	"errors"
	"fmt"
	"reflect"
	"unsafe"

	"github.com/bytedance/sonic"
)

// copying decodes strings by copying them out of the input (map keys,
// json.RawMessage and json.Number included), so decoded values never
// keep a read slab alive.
var copying = sonic.Config{CopyString: true}.Froze()

// Decode unmarshals Data into v with sonic. Decoded strings are copies:
// v may be kept after Data is dropped without pinning the read slab
// (DecodeZeroCopy trades that for speed).
func (m Message) Decode(v any) error { return decodeInPlace(copying, m.Data, v) }

// DecodeZeroCopy unmarshals Data into v without copying strings: they
// point into Data, and so keep its 64 KiB read slab alive for as long as
// v (or any string taken from it) lives. Use it only when the decoded
// value is short-lived or its strings are copied before keeping them.
func (m Message) DecodeZeroCopy(v any) error { return decodeInPlace(sonic.ConfigDefault, m.Data, v) }

// decodeInPlace decodes data into v with api, reading data where it is.
// sonic's Unmarshal copies its []byte input whole before decoding (so
// even sonic's zero-copy strings would point into that copy); data
// here is never written while it is decoded (Message.Data is not, nor a
// call's result), so it is handed over as a string without a copy.
func decodeInPlace(api sonic.API, data []byte, v any) error {
	return api.UnmarshalFromString(unsafe.String(unsafe.SliceData(data), len(data)), v)
}

// Decode returns m's data decoded as a T, as Message.Decode does.
//
//	tick, err := client.Decode[Ticker](m)
func Decode[T any](m Message) (T, error) {
	var v T
	err := m.Decode(&v)
	return v, err
}

// Warm compiles the decoders of the types of values (a value or a nil
// pointer of each type decoded later, e.g. Ticker{} or (*Book)(nil)), so
// the first message of each type is not late by the few milliseconds
// sonic takes to compile. Call it at start-up.
func Warm(values ...any) error {
	for _, v := range values {
		t := reflect.TypeOf(v)
		if t == nil {
			return errors.New("wsfan: Warm(nil): pass a value or a typed nil pointer")
		}
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if err := sonic.Pretouch(t); err != nil {
			return fmt.Errorf("failed to warm the decoder of %v: %w", t, err)
		}
	}
	return nil
}
