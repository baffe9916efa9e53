"""bench/outline.py on a generated project (the real one is more-itertools, downloaded): every
function is found in the outline with a range that holds its whole definition, and reading by
outline costs fewer tokens than reading the file whole, which pages past the read tool's limit."""

from __future__ import annotations

from pathlib import Path

from bench.outline import measure, summarize


def generate(path: Path, functions: int, body: int) -> None:
    parts = ['"""Generated."""\nimport functools\n']
    for n in range(functions):
        decorator = "@functools.cache\n" if n % 3 == 0 else ""
        lines = "\n".join(f"    total += {k}  # step {k} of f{n}" for k in range(body))
        parts.append(f"\n\n{decorator}def f{n}(x):\n    total = x\n{lines}\n    return total\n")
    path.write_text("".join(parts))


async def test_reading_by_outline_finds_every_function_for_fewer_tokens(tmp_path: Path) -> None:
    generate(tmp_path / "big.py", functions=60, body=40)  # about 2,700 lines: two pages
    generate(tmp_path / "small.py", functions=9, body=5)
    measured = await measure(tmp_path, ("big.py", "small.py"), lookups=9)
    assert measured["files"]["big.py"]["whole_pages"] == 2
    assert [(r["file"], r["function"]) for r in measured["lookups"]][:2] == [
        ("big.py", "f0"),
        ("big.py", "f10"),
    ]
    s = summarize(measured)
    assert s["complete"] == s["lookups"] == 9
    assert s["one_outline_median"] < s["one_whole_median"] / 5
    assert s["all_outline"] < s["all_whole"]
