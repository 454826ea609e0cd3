package ethereum

import (
	"github.com/wsfan/wsfan/internal/jsonscan"
	"github.com/wsfan/wsfan/pkg/protocol"
)

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

// appendIdentityScanned is AppendIdentity reading every member.
func appendIdentityScanned(dst, data []byte) ([]byte, bool) {
	var hash, blockHash, logIndex []byte
	removed := false
	m := jsonscan.Object(data, 0)
	for {
		key, start, more := m.Next()
		if !more {
			break
		}
		end := m.Skip()
		switch string(key) {
		case "hash":
			hash = data[start:end]
		case "blockHash":
			blockHash = data[start:end]
		case "logIndex":
			logIndex = data[start:end]
		case "removed":
			removed = string(data[start:end]) == "true"
		}
	}
	switch {
	case logIndex != nil && blockHash != nil:
		dst = append(append(append(dst, 'l'), blockHash...), logIndex...)
		if removed {
			dst = append(dst, 'r')
		}
		return dst, true
	case hash != nil:
		return append(append(dst, 'h'), hash...), true
	}
	return dst, false
}

var _ protocol.Identifying = dialect{}
