package ethereum

// A node takes calls in one JSON-RPC batch array (Venue.MaxBatch), which
// it answers with one array of the responses (go-ethereum rpc/handler.go,
// handleBatch). Over its cap (--rpc.batch-request-limit) it answers one
// -32600 "batch too large" instead (batchTooLarge); over its response
// budget (--rpc.batch-response-max-size) it answers the calls past it
// with -32003 "response too large".

// codeResponseTooLarge is a node's answer to the calls of a batch past
// its response budget: go-ethereum's -32003 "response too large"
// (rpc/errors.go).
const codeResponseTooLarge = -32003
