"""Tags and growth over time as small SVG charts, drawn on the server (no chart library).

Both read only what the memory views hold (tags, the day a memory was saved); labels go
through :func:`~affidavit.console.html.tag`, so a tag name is text, never markup.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from affidavit.console.html import Markup, tag

WIDTH = 560
ROW = 22
TOP_TAGS = 12


def tag_counts(tag_lists: Iterable[Sequence[str]]) -> list[tuple[str, int]]:
    """The most used tags, most used first (ties by name)."""
    counts = Counter(t for tags in tag_lists for t in tags)
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:TOP_TAGS]


def growth(days: Iterable[str]) -> list[tuple[str, int, int]]:
    """Per month (``YYYY-MM``): memories saved that month and the running total."""
    months = Counter(day[:7] for day in days if day)
    total = 0
    out = []
    for month in sorted(months):
        total += months[month]
        out.append((month, months[month], total))
    return out


def bar_chart(rows: Sequence[tuple[str, int]], *, label: str, chart_id: str) -> Markup:
    """Horizontal bars, one per ``(name, count)``."""
    if not rows:
        return tag("p", "No tags yet.", class_="muted small")
    top = max(count for _, count in rows)
    left, right = 140, 50
    span = WIDTH - left - right
    bars = []
    for i, (name, count) in enumerate(rows):
        y = i * ROW
        width = max(2, round(span * count / top))
        bars.append(
            tag(
                "g",
                tag("title", f"{name}: {count}"),
                tag("text", name[:20], x=left - 8, y=y + 15, class_="name"),
                tag("rect", x=left, y=y + 3, width=width, height=ROW - 7, rx=3, class_="bar"),
                tag("text", count, x=left + width + 6, y=y + 15, class_="value"),
                data_name=name,
            )
        )
    height = len(rows) * ROW + 4
    return tag(
        "svg",
        bars,
        viewBox=f"0 0 {WIDTH} {height}",
        width=WIDTH,
        height=height,
        role="img",
        aria_label=label,
        class_="chart",
        id=chart_id,
    )


def growth_chart(rows: Sequence[tuple[str, int, int]], *, chart_id: str) -> Markup:
    """Columns of memories saved per month (left scale), the running total as a line (its
    own scale, labelled at the right)."""
    if not rows:
        return tag("p", "No memories yet.", class_="muted small")
    height, bottom, top, left, right = 210, 28, 24, 10, 10
    plot = height - bottom - top
    step = (WIDTH - left - right) / len(rows)
    busiest = max(added for _, added, _ in rows)
    total = rows[-1][2]
    every = max(1, -(-len(rows) // 6))  # at most about six month labels
    columns, points = [], []
    for i, (month, added, running) in enumerate(rows):
        x = left + i * step
        h = plot * added / busiest
        columns.append(
            tag(
                "g",
                tag("title", f"{month}: {added} saved, {running} in all"),
                tag(
                    "rect",
                    x=round(x + step * 0.15, 1),
                    y=round(top + plot - h, 1),
                    width=round(step * 0.7, 1),
                    height=round(max(h, 1), 1),
                    class_="bar",
                ),
                tag("text", month, x=round(x + step / 2, 1), y=height - 10, class_="axis")
                if i % every == 0
                else None,
                data_month=month,
            )
        )
        points.append(f"{x + step / 2:.1f},{top + plot - plot * running / total:.1f}")
    return tag(
        "svg",
        columns,
        tag("polyline", points=" ".join(points), class_="line"),
        tag("text", f"bars: saved per month (up to {busiest})", x=left, y=12, class_="value"),
        tag("text", f"line: {total} in all", x=WIDTH - right, y=12, class_="name"),
        viewBox=f"0 0 {WIDTH} {height}",
        width=WIDTH,
        height=height,
        role="img",
        aria_label="memories saved per month, and the running total",
        class_="chart",
        id=chart_id,
    )
