// A Node program that speaks the exchange's own protocol to a wsfan
// sidecar, exactly as it would to the exchange: it sends the dialect's
// subscribe request and reads its notifications. No npm packages: Node
// 22 has WebSocket built in; Node 20 needs --experimental-websocket.
//
//   node --experimental-websocket ws_consumer.mjs ws://127.0.0.1:8765/ws ticker.BTC-PERPETUAL.raw
//
// This is the Thalex dialect (the demo's default). Set WSFAN_COUNT to
// stop after that many notifications.
const [url, ...topics] = process.argv.slice(2);
if (!url || topics.length === 0) {
  console.error("usage: node ws_consumer.mjs ws://HOST:PORT/ws TOPIC...");
  process.exit(2);
}
let left = Number(process.env.WSFAN_COUNT || 0);
if (typeof WebSocket !== "function") {
  console.error(`this Node (${process.version}) has no WebSocket: use Node 22, or Node 20 with the flag:
  node --experimental-websocket ws_consumer.mjs ${process.argv.slice(2).join(" ")}`);
  process.exit(2);
}

const ws = new WebSocket(url);
ws.onopen = () => {
  ws.send(JSON.stringify({ id: 1, method: "public/subscribe", params: { channels: topics } }));
};
ws.onmessage = (ev) => {
  const msg = JSON.parse(ev.data);
  if (msg.id === 1) {
    if (msg.error) {
      console.error("subscribe refused:", msg.error.message);
      process.exit(1);
    }
    console.log("subscribed:", msg.result.join(", "));
    return;
  }
  if (msg.channel_name) {
    console.log(msg.channel_name, JSON.stringify(msg.notification).slice(0, 120));
    if (left > 0 && --left === 0) ws.close();
  }
};
ws.onerror = (ev) => console.error("websocket error:", ev.message ?? ev.type);
ws.onclose = () => process.exit(0);
