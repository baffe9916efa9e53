"""The floor of an end-to-end benchmark: the same HTTP exchanges as agentls, and nothing else.

    python bench/floor.py BODIES.jsonl

Replays each request body (one JSON object a line, as agentls sent it and the local server
recorded it) with the same `anthropic` SDK, the same way agentls calls it (AsyncAnthropic,
max_retries=0, messages.create(stream=True)), and consumes every streamed event. Bodies are read
one at a time, so the floor never holds more than the request in flight. ANTHROPIC_BASE_URL and
ANTHROPIC_API_KEY point it at the server. Prints the number of requests and events.
"""

import asyncio
import json
import sys


async def main(path: str) -> int:
    from anthropic import AsyncAnthropic

    client = AsyncAnthropic(max_retries=0, timeout=600.0)
    requests = events = 0
    with open(path, encoding="utf-8") as bodies:  # noqa: ASYNC230 - a line at a time
        for line in bodies:
            body = json.loads(line)
            body.pop("stream", None)
            stream = await client.messages.create(**body, stream=True)
            async for _event in stream:
                events += 1
            requests += 1
            del body, stream
    await client.close()
    print(f"{requests} requests, {events} events")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1])))
