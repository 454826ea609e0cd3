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
//
// Batches: a node caps the calls of one batch array (go-ethereum's
// --rpc.batch-request-limit, 1,000 by default) and answers a larger one
// with one -32600 "batch too large" under the first call's id and nothing
// for the rest (rpc/handler.go); hosted providers cap WebSocket batches
// at 20 or fewer. Subscribes go out in batches of MaxBatch (20); a batch
// refused as too large is split (BatchTooLarge tells the refusal). A
// request over a provider's rate limit gets -32005, "limit exceeded"
// (EIP-1474).
package ethereum
