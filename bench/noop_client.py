"""The server's share: the same requests as agentls, sent with the standard library only.

    python bench/noop_client.py BODIES.jsonl URL

No SDK and no parsing: each body goes out as it was recorded on one keep-alive connection and
the whole streamed response is read and thrown away. What this process takes beyond a bare
Python start is the local server's own time (plus loopback I/O).
"""

import http.client
import sys
import time
from urllib.parse import urlsplit


def main(path: str, url: str) -> int:
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port or 80)
    headers = {
        "content-type": "application/json",
        "anthropic-version": "2023-06-01",
        "x-api-key": "bench-key",
        "accept": "text/event-stream",
    }
    requests = received = 0
    started = time.perf_counter()
    with open(path, "rb") as bodies:
        for line in bodies:
            conn.request("POST", "/v1/messages", body=line.rstrip(b"\n"), headers=headers)
            response = conn.getresponse()
            data = response.read()
            if response.status != 200:
                print(f"HTTP {response.status}: {data[:300]!r}", file=sys.stderr)
                return 1
            received += len(data)
            requests += 1
    conn.close()
    took = time.perf_counter() - started
    print(f"{requests} requests, {received} bytes received, {took:.3f} s in requests")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
