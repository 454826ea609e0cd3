// Package ethereum speaks the pub/sub API of Ethereum nodes over
// WebSocket, as go-ethereum documents it
// (https://geth.ethereum.org/docs/interacting-with-geth/rpc/pubsub) and
// the execution API specification defines JSON-RPC
// (https://ethereum.org/en/developers/docs/apis/json-rpc/):
//
//	→ {"jsonrpc":"2.0","id":1,"method":"eth_subscribe","params":["newHeads"]}
//	← {"jsonrpc":"2.0","id":1,"result":"0xcd0c3e8af590364c09d0fa6a1210faf5"}
//	← {"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"0xcd0c…","result":{...}}}
//
// It holds the client half (Protocol) and the server half (Server, and
// Topic, which names a subscription by its params). Importing the package
// registers the dialect as "ethereum" with protocol.ByName. Nodes take
// JSON-RPC batch arrays; subscription ids are the node's, new on every
// connection. Providers authenticate the handshake: see auth.Bearer.
package ethereum
