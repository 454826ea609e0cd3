package image

import (
	"bytes"
	"encoding/pem"

	"golang.org/x/crypto/x509roots/fallback/bundle"
)

// caFile is where the image holds its CA roots: the first path Go's
// crypto/x509 reads on Linux, so the binary needs no SSL_CERT_FILE.
const caFile = "etc/ssl/certs/ca-certificates.crt"

// rootsPEM is the NSS trust store of the pinned
// golang.org/x/crypto/x509roots/fallback version, as PEM. Roots that carry
// a constraint PEM cannot say (NSS's distrust-after dates) are left out
// rather than trusted without it.
func rootsPEM() []byte {
	var b bytes.Buffer
	for r := range bundle.Roots() {
		if r.Constraint != nil {
			continue
		}
		_ = pem.Encode(&b, &pem.Block{Type: "CERTIFICATE", Bytes: r.Certificate}) // a bytes.Buffer does not fail
	}
	return b.Bytes()
}
