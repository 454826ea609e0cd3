package ethereum

import "github.com/wsfan/wsfan/pkg/protocol"

// readOnly are the methods of the Ethereum JSON-RPC API (EIP-1474, the
// execution-apis specification) that read a node's state and change
// nothing: the client makes one again on the next connection (another
// endpoint's) when one dies under it. Sending a transaction, signing,
// and the per-connection filters and subscriptions never are.
var readOnly = map[string]bool{
	"eth_blockNumber": true, "eth_chainId": true, "eth_syncing": true, "eth_gasPrice": true,
	"eth_maxPriorityFeePerGas": true, "eth_feeHistory": true, "eth_blobBaseFee": true,
	"eth_getBalance": true, "eth_getCode": true, "eth_getStorageAt": true, "eth_getTransactionCount": true,
	"eth_getProof": true, "eth_call": true, "eth_estimateGas": true, "eth_createAccessList": true,
	"eth_getBlockByNumber": true, "eth_getBlockByHash": true, "eth_getBlockReceipts": true,
	"eth_getBlockTransactionCountByNumber": true, "eth_getBlockTransactionCountByHash": true,
	"eth_getTransactionByHash": true, "eth_getTransactionReceipt": true,
	"eth_getTransactionByBlockNumberAndIndex": true, "eth_getTransactionByBlockHashAndIndex": true,
	"eth_getUncleCountByBlockNumber": true, "eth_getUncleCountByBlockHash": true,
	"eth_getLogs": true, "net_version": true, "net_listening": true, "net_peerCount": true,
	"web3_clientVersion": true,
}

// ClassifyMethod tells the methods that only read a node's state.
func (dialect) ClassifyMethod(method string, _ []byte) protocol.MethodClass {
	return protocol.MethodClass{ReadOnly: readOnly[method]}
}
