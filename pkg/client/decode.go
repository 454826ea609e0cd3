package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
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
	if err := api.UnmarshalFromString(unsafe.String(unsafe.SliceData(data), len(data)), v); err != nil {
		return explainDecode(data, v, err)
	}
	return nil
}

// DecodeError says where a decode failed: the field, the type it wants
// and what the JSON holds there.
type DecodeError struct {
	// Into is the type decoded into.
	Into reflect.Type
	// Field is the path of the field ("bids" or "stats.volume"); "" for
	// the value itself.
	Field string
	// Want is the Go type of the field, Found what the JSON holds (a
	// string, a number, an object...).
	Want, Found string
	// Offset is the byte of the data where the value ends.
	Offset int64
	// Err is encoding/json's error, which errors.As also finds.
	Err error
}

func (e *DecodeError) Error() string {
	field := "the value"
	if e.Field != "" {
		field = "field " + strconv.Quote(e.Field)
	}
	return fmt.Sprintf("cannot decode into %v: %s wants %s, found a JSON %s (at byte %d)", e.Into, field, e.Want, e.Found, e.Offset)
}

// Unwrap returns encoding/json's error.
func (e *DecodeError) Unwrap() error { return e.Err }

// explainDecode turns sonic's error, which names no field, into one that
// does: encoding/json decodes the data again into a fresh value of v's
// type, on the error path only, and its error says where. Other errors
// (invalid JSON) come back as encoding/json words them, wrapping sonic's.
func explainDecode(data []byte, v any, err error) error {
	t := reflect.TypeOf(v)
	if t == nil || t.Kind() != reflect.Pointer {
		return err
	}
	jerr := json.Unmarshal(data, reflect.New(t.Elem()).Interface())
	var typeErr *json.UnmarshalTypeError
	switch {
	case errors.As(jerr, &typeErr):
		return &DecodeError{Into: t.Elem(), Field: typeErr.Field, Want: typeErr.Type.String(), Found: typeErr.Value, Offset: typeErr.Offset, Err: typeErr}
	case jerr != nil:
		return fmt.Errorf("cannot decode into %v: %w", t.Elem(), jerr)
	}
	return err
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
