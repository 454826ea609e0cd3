package okx

// OKX's WebSocket error codes wsfan reads or writes
// (https://www.okx.com/docs-v5/en/#error-code-websocket-public). OKX
// sends them as strings ("60012"); the client reads them as numbers
// (client.RPCError.Code).
const (
	CodeLoginFailed     = 60009 // "Login failure"
	CodePleaseLogIn     = 60011 // "Please log in": a private channel on a connection not logged in
	CodeInvalidRequest  = 60012 // "Invalid request"
	CodeInvalidArgs     = 60013 // "Invalid args"
	CodeTooFrequent     = 60014 // "Requests too frequent"
	CodeNoSuchChannel   = 60018 // "Wrong URL or {0} doesn't exist. …"
	CodeInvalidOp       = 60019 // "Invalid op: {op}"
	CodeInternalError   = 64007 // "Operation {0} failed due to WebSocket internal error. …"
	codeInvalidSign     = 60007 // "Invalid sign"
	codeExpired         = 60006 // "Timestamp request expired"
	codeInvalidAPIKey   = 60005 // "Invalid apiKey"
	codeWrongPassphrase = 60024 // "Wrong passphrase"
)

// noSuchChannel is 60018's message; {0} is the argument as
// arg.text spells it.
const noSuchChannel = "Wrong URL or {0} doesn't exist. Please use the correct URL, channel and parameters referring to API document."
