"""panel_transcript: a session of 2,000 messages in the VS Code panel (bench/panel.mjs transcript).

The recorded demo session's messages repeated to 2,000, made into the panel's view by the
extension's viewFromMessages, shown by the real webview bundle in headless Chromium at 300 px.
Measured: open (the `state` message handled, the transcript drawn and laid out; and to the next
frame), a streamed text delta (the message handled, the panel's render frame and the layout after
it), a scroll step (one screen up, laid out; and the frames over 50 ms on the way to the top), and
deltas again once back at the bottom. Targets: open under 300 ms, a delta under 16 ms.
"""

from __future__ import annotations

import os

from bench.common import BenchResult, Figure, runs
from bench.panel_run import run_panel


def run(result: BenchResult) -> None:
    messages = int(os.environ.get("BENCH_MESSAGES", "2000"))
    data = run_panel("transcript", "--messages", str(messages), "--runs", str(runs(3)))
    result.rounds = data["runs"]
    opened, framed, delta = data["open_ms"], data["open_to_frame_ms"], data["delta_ms"]
    result.add(
        Figure(
            f"open a session of {messages:,} messages (median of {opened['n']})",
            opened["median"],
            "ms",
            target="< 300 ms",
            met=opened["median"] < 300,
        )
    )
    result.add(Figure("  open, to the next frame", framed["median"], "ms"))
    result.add(
        Figure(
            f"streamed delta: handled + render frame (median of {delta['n']}; "
            f"max {delta['max']:.0f} ms)",
            delta["median"],
            "ms",
            target="< 16 ms",
            met=delta["median"] < 16,
        )
    )
    again = data["delta_all_drawn_ms"]
    result.add(
        Figure(
            f"  streamed delta after scrolling to the top and back (max {again['max']:.0f} ms)",
            again["median"],
            "ms",
            target="< 16 ms",
            met=again["median"] < 16,
        )
    )
    result.add(Figure("  scroll one screen, laid out", data["scroll_step_ms"]["median"], "ms"))
    pages = data["page_draw_ms"]
    result.add(
        Figure(
            f"  a page of earlier items drawn while scrolling up (median of {pages['n']}; "
            f"max {pages.get('max', 0):.0f} ms)",
            pages.get("median", 0),
            "ms",
            target="< 16 ms",
            met=pages.get("median", 0) < 16,
        )
    )
    long = data["scroll_long_frames_ms"]
    result.add(
        Figure(
            f"  frames over 50 ms in one scroll to the top, {data['scroll_steps'] // data['runs']} "
            f"screens (median of their lengths {long.get('median', 0):.0f} ms)",
            round(long["n"] / data["runs"], 1),
            "",
        )
    )
    result.details.update({k: v for k, v in data.items() if k.endswith("_ms")})
    result.details["rendered_items_at_open"] = data["rendered_items"]
