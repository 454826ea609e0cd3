package record

import (
	"bytes"
	"encoding/json"
	"strings"
)

// secretKeys are the members whose values a written frame never keeps
// in a recording: every venue's login (Deribit's client_secret and
// signature, Thalex's token, OKX's apiKey, passphrase and sign) and the
// usual names of credentials.
var secretKeys = map[string]bool{
	"apikey": true, "api_key": true, "key": true, "secret": true, "client_secret": true,
	"passphrase": true, "password": true, "sign": true, "signature": true,
	"token": true, "access_token": true, "refresh_token": true, "jwt": true, "private_key": true,
}

// redacted replaces a secret's value.
const redacted = "[redacted]"

// redactFrame returns frame with the value of every member named in
// secretKeys (any depth, any case) replaced by "[redacted]"; a frame
// without one is returned as it is, verbatim. A frame that is not JSON
// is kept whole only when it names no secret key at all.
func redactFrame(frame []byte) []byte {
	if !mayHoldSecret(frame) {
		return frame
	}
	dec := json.NewDecoder(bytes.NewReader(frame))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return []byte(`"` + redacted + `: a frame that is not JSON and names a credential"`)
	}
	if !redactValue(v) {
		return frame
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		return []byte(`"` + redacted + `"`)
	}
	return bytes.TrimRight(out.Bytes(), "\n")
}

// mayHoldSecret is a cheap first look: whether any secret key's name
// appears in frame, whatever its case.
func mayHoldSecret(frame []byte) bool {
	lower := bytes.ToLower(frame)
	for k := range secretKeys {
		if bytes.Contains(lower, []byte(`"`+k+`"`)) {
			return true
		}
	}
	return false
}

// redactValue redacts v in place and reports whether it changed it.
func redactValue(v any) bool {
	changed := false
	switch v := v.(type) {
	case map[string]any:
		for k, val := range v {
			if secretKeys[strings.ToLower(k)] {
				if _, isObject := val.(map[string]any); !isObject {
					v[k] = redacted
					changed = true
					continue
				}
			}
			changed = redactValue(val) || changed
		}
	case []any:
		for _, e := range v {
			changed = redactValue(e) || changed
		}
	}
	return changed
}
