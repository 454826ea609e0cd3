#!/usr/bin/env python3
"""Read topics from a wsfan sidecar's Server-Sent Events, with the
standard library only.

    python3 sse_consumer.py http://127.0.0.1:8765 ticker.BTC-PERPETUAL.raw [TOPIC...]

Each event's data is {"topic": ..., "data": <the exchange's payload>}. A
stream that breaks is opened again with the last event's id, and the
sidecar replays what was missed (or sends {"topic": ..., "gap": true}).
Set WSFAN_COUNT to stop after that many messages.
"""
import json
import os
import sys
import time
import urllib.parse
import urllib.error
import urllib.request


def stream(base, topics, last_id=None):
    """Yield (id, message) from the sidecar until the stream ends."""
    query = urllib.parse.urlencode([("topic", t) for t in topics])
    req = urllib.request.Request(base.rstrip("/") + "/v1/stream?" + query)
    req.add_header("Accept", "text/event-stream")
    if last_id:
        req.add_header("Last-Event-ID", last_id)
    token = os.environ.get("WSFAN_TOKEN")
    if token:
        req.add_header("Authorization", "Bearer " + token)
    with urllib.request.urlopen(req) as resp:
        event_id, data = None, []
        for raw in resp:
            line = raw.decode("utf-8").rstrip("\r\n")
            if not line:  # the blank line ends an event
                if data:
                    yield event_id, json.loads("\n".join(data))
                event_id, data = None, []
            elif line.startswith("id:"):
                event_id = line[3:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].lstrip())


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    base, topics = sys.argv[1], sys.argv[2:]
    left = int(os.environ.get("WSFAN_COUNT", "0")) or None
    last_id = None
    while True:
        try:
            for event_id, msg in stream(base, topics, last_id):
                last_id = event_id or last_id
                if msg.get("gap"):
                    print(msg["topic"], "messages were lost", flush=True)
                    continue
                print(msg["topic"], json.dumps(msg["data"])[:120], flush=True)
                if left is not None:
                    left -= 1
                    if left == 0:
                        return
        except urllib.error.HTTPError as err:
            body = err.read().decode("utf-8", "replace")
            if 400 <= err.code < 500:
                # The request is wrong (an unknown topic, an origin or a
                # token refused): retrying cannot help. Say why and stop.
                sys.exit(f"refused: HTTP {err.code}: {body}")
            print(f"HTTP {err.code}: {body} - retrying", file=sys.stderr)
            time.sleep(1)
        except OSError as err:
            print("stream broke:", err, "- reconnecting", file=sys.stderr)
            time.sleep(1)


if __name__ == "__main__":
    main()
