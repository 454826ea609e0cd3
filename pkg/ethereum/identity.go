package ethereum

import "github.com/wsfan/wsfan/internal/jsonscan"

// AppendIdentity appends what identifies a notification across nodes,
// which spell the same block differently (member order, fields a client
// adds): a log's block hash, index and removed flag (a log a
// reorganisation took back is sent again with "removed": true, and is a
// message of its own), or a head's hash. A pending transaction's hash, a
// bare string, has no members: its content is its identity.
func (dialect) AppendIdentity(dst, data []byte) ([]byte, bool) {
	// A head's hash as geth writes it (no space after the colon), found
	// as Link finds it; a log has no "hash" member, and anything else is
	// read member by member.
	if h := valueOf(data, keyHash); h != nil {
		return append(append(dst, 'h'), h...), true
	}
	return appendIdentityScanned(dst, data)
}

// appendIdentityScanned is AppendIdentity reading the members.
func appendIdentityScanned(dst, data []byte) ([]byte, bool) {
	var v [4][]byte // hash, blockHash, logIndex, removed
	jsonscan.Values(data, 0, identityKeys, v[:])
	switch {
	case v[2] != nil && v[1] != nil:
		dst = append(append(append(dst, 'l'), v[1]...), v[2]...)
		if string(v[3]) == "true" {
			dst = append(dst, 'r')
		}
		return dst, true
	case v[0] != nil:
		return append(append(dst, 'h'), v[0]...), true
	}
	return dst, false
}

// identityKeys are the members appendIdentityScanned reads.
var identityKeys = []string{"hash", "blockHash", "logIndex", "removed"}
