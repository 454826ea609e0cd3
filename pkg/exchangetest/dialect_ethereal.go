package exchangetest

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"
)

// etherealDialect speaks Ethereal's event API: subscribe and unsubscribe
// events without acknowledgement, notifications {"e":TYPE,"t":MS,"data":DATA},
// no RPC.
type etherealDialect struct{}

// etherealEvent is a client frame, {"event":"subscribe","data":{...}}.
type etherealEvent struct {
	Event string `json:"event"`
	Data  struct {
		Type         string `json:"type"`
		Symbol       string `json:"symbol"`
		SubaccountID string `json:"subaccountId"`
	} `json:"data"`
}

// handleText (un)subscribes at once; refused topics and other frames are
// ignored, as there are no acknowledgements.
func (etherealDialect) handleText(c *conn, msg []byte) {
	var ev etherealEvent
	if json.Unmarshal(msg, &ev) != nil || ev.Data.Type == "" {
		return
	}
	key := ev.Data.Symbol
	if key == "" {
		key = ev.Data.SubaccountID
	}
	topic := ev.Data.Type + ":" + key
	switch ev.Event {
	case "subscribe":
		if c.s.accepts(topic) {
			c.s.addSub(c, topic, "")
		}
	case "unsubscribe":
		c.s.removeSub(c, topic)
	}
}

func (etherealDialect) perConn() bool { return false }

func (etherealDialect) appendNotification(dst []byte, topic, _ string, data []byte) []byte {
	typ, _, _ := strings.Cut(topic, ":")
	dst = append(dst, `{"e":`...)
	dst = appendJSONString(dst, typ)
	dst = append(dst, `,"t":`...)
	dst = strconv.AppendInt(dst, time.Now().UnixMilli(), 10)
	dst = append(dst, `,"data":`...)
	dst = append(dst, data...)
	return append(dst, '}')
}
