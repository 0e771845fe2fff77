"""PIL drawing primitives: shapes, text cards, charts, UI widgets (all deterministic, no system fonts)."""

from __future__ import annotations

import math
import random

from PIL import Image, ImageDraw, ImageFont

WHITE, BLACK = (255, 255, 255), (0, 0, 0)
COLORS = {
    "red": (220, 30, 30),
    "blue": (30, 70, 220),
    "green": (30, 160, 60),
    "yellow": (245, 205, 20),
    "orange": (245, 140, 20),
    "purple": (130, 50, 170),
    "grey": (150, 150, 150),
    "black": BLACK,
    "white": WHITE,
    "brown": (130, 80, 40),
    "sky": (135, 195, 240),
    "pink": (240, 120, 180),
}


def font(size: int) -> ImageFont.FreeTypeFont:
    """Pillow's bundled font, so output does not depend on the fonts installed on the machine."""
    return ImageFont.load_default(size=size)


def canvas(w: int, h: int, bg: tuple[int, int, int] = WHITE) -> tuple[Image.Image, ImageDraw.ImageDraw]:
    img = Image.new("RGB", (w, h), bg)
    return img, ImageDraw.Draw(img)


def circle(d: ImageDraw.ImageDraw, cx: float, cy: float, r: float, fill, outline=None) -> None:
    d.ellipse((cx - r, cy - r, cx + r, cy + r), fill=fill, outline=outline, width=3)


def square(d: ImageDraw.ImageDraw, cx: float, cy: float, half: float, fill) -> None:
    d.rectangle((cx - half, cy - half, cx + half, cy + half), fill=fill)


def triangle(d: ImageDraw.ImageDraw, cx: float, cy: float, r: float, fill) -> None:
    d.polygon([(cx, cy - r), (cx - r * 0.9, cy + r * 0.7), (cx + r * 0.9, cy + r * 0.7)], fill=fill)


def polygon(d: ImageDraw.ImageDraw, cx: float, cy: float, r: float, sides: int, fill, rot: float = 0) -> None:
    pts = [
        (cx + r * math.cos(rot + 2 * math.pi * i / sides), cy + r * math.sin(rot + 2 * math.pi * i / sides))
        for i in range(sides)
    ]
    d.polygon(pts, fill=fill)


def star(d: ImageDraw.ImageDraw, cx: float, cy: float, r: float, fill) -> None:
    pts = []
    for i in range(10):
        rr = r if i % 2 == 0 else r * 0.42
        a = -math.pi / 2 + i * math.pi / 5
        pts.append((cx + rr * math.cos(a), cy + rr * math.sin(a)))
    d.polygon(pts, fill=fill)


def text(d: ImageDraw.ImageDraw, xy: tuple[float, float], s: str, size: int, fill=BLACK, anchor="mm") -> None:
    d.text(xy, s, font=font(size), fill=fill, anchor=anchor)


def scatter(seed: int, n: int, w: int, h: int, margin: int, min_gap: int) -> list[tuple[int, int]]:
    """n non-overlapping centres, reproducible from the seed (so counting questions stay answerable)."""
    rng = random.Random(seed)
    pts: list[tuple[int, int]] = []
    while len(pts) < n:
        p = (rng.randint(margin, w - margin), rng.randint(margin, h - margin))
        if all((p[0] - q[0]) ** 2 + (p[1] - q[1]) ** 2 >= min_gap**2 for q in pts):
            pts.append(p)
    return pts


def text_card(w: int, h: int, lines: list[str], size: int, bg=WHITE, fg=BLACK, border=None) -> Image.Image:
    img, d = canvas(w, h, bg)
    if border:
        d.rectangle((6, 6, w - 7, h - 7), outline=border, width=6)
    step = size * 1.35
    top = h / 2 - step * (len(lines) - 1) / 2
    for i, line in enumerate(lines):
        text(d, (w / 2, top + i * step), line, size, fg)
    return img


def bar_chart(
    title: str, labels: list[str], values: list[int], color, w: int = 640, h: int = 420
) -> Image.Image:
    img, d = canvas(w, h)
    text(d, (w / 2, 28), title, 26)
    x0, y0, x1, y1 = 70, 70, w - 30, h - 60
    d.line((x0, y0, x0, y1), fill=BLACK, width=2)
    d.line((x0, y1, x1, y1), fill=BLACK, width=2)
    top = max(values) * 1.15
    slot = (x1 - x0) / len(values)
    for i, (lab, v) in enumerate(zip(labels, values)):
        cx = x0 + slot * (i + 0.5)
        yt = y1 - (y1 - y0) * v / top
        d.rectangle((cx - slot * 0.3, yt, cx + slot * 0.3, y1), fill=color)
        text(d, (cx, yt - 14), str(v), 20)
        text(d, (cx, y1 + 22), lab, 20)
    return img


def pie_chart(title: str, parts: list[tuple[str, int, str]], w: int = 640, h: int = 420) -> Image.Image:
    img, d = canvas(w, h)
    text(d, (w / 2, 28), title, 26)
    box = (40, 70, 360, 390)
    start = -90.0
    for i, (lab, pct, col) in enumerate(parts):
        end = start + 360 * pct / 100
        d.pieslice(box, start, end, fill=COLORS[col], outline=WHITE, width=2)
        start = end
        ly = 110 + i * 60
        d.rectangle((390, ly - 14, 418, ly + 14), fill=COLORS[col])
        text(d, (432, ly), f"{lab}: {pct}%", 24, anchor="lm")
    return img


def line_chart(title: str, labels: list[str], values: list[int], w: int = 640, h: int = 420) -> Image.Image:
    img, d = canvas(w, h)
    text(d, (w / 2, 28), title, 26)
    x0, y0, x1, y1 = 70, 70, w - 40, h - 60
    d.line((x0, y0, x0, y1), fill=BLACK, width=2)
    d.line((x0, y1, x1, y1), fill=BLACK, width=2)
    top = max(values) * 1.2
    pts = []
    for i, (lab, v) in enumerate(zip(labels, values)):
        x = x0 + (x1 - x0) * (i + 0.5) / len(values)
        y = y1 - (y1 - y0) * v / top
        pts.append((x, y))
        text(d, (x, y1 + 22), lab, 20)
        text(d, (x, y - 20), str(v), 20)
    d.line(pts, fill=COLORS["red"], width=4)
    for x, y in pts:
        circle(d, x, y, 6, COLORS["red"])
    return img


def toggle(d: ImageDraw.ImageDraw, x: int, y: int, on: bool) -> None:
    col = COLORS["green"] if on else (200, 200, 200)
    d.rounded_rectangle((x, y, x + 70, y + 36), radius=18, fill=col)
    circle(d, x + (52 if on else 18), y + 18, 14, WHITE)


def button(d: ImageDraw.ImageDraw, box: tuple[int, int, int, int], label: str, fill, fg=WHITE) -> None:
    d.rounded_rectangle(box, radius=10, fill=fill)
    text(d, ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2), label, 24, fg)


def field(d: ImageDraw.ImageDraw, box: tuple[int, int, int, int], label: str, value: str) -> None:
    text(d, (box[0], box[1] - 16), label, 18, anchor="lm")
    d.rounded_rectangle(box, radius=6, outline=(120, 120, 120), width=2, fill=WHITE)
    text(d, (box[0] + 12, (box[1] + box[3]) / 2), value, 20, (90, 90, 90), anchor="lm")


def qr_like(seed: int, modules: int = 25, cell: int = 12, quiet: int = 4) -> Image.Image:
    """A QR-code-looking pattern: three finder squares plus seeded random modules (not decodable)."""
    size = (modules + 2 * quiet) * cell
    img, d = canvas(size, size)
    rng = random.Random(seed)
    grid = [[rng.random() < 0.5 for _ in range(modules)] for _ in range(modules)]
    for fx, fy in ((0, 0), (modules - 7, 0), (0, modules - 7)):
        for y in range(-1, 8):
            for x in range(-1, 8):
                if 0 <= fy + y < modules and 0 <= fx + x < modules:
                    ring = max(abs(x - 3), abs(y - 3))
                    grid[fy + y][fx + x] = ring in (0, 1, 3)
    for y in range(modules):
        for x in range(modules):
            if grid[y][x]:
                px, py = (x + quiet) * cell, (y + quiet) * cell
                d.rectangle((px, py, px + cell - 1, py + cell - 1), fill=BLACK)
    return img


def clock(hour: int, minute: int, size: int = 400) -> Image.Image:
    img, d = canvas(size, size)
    c, r = size / 2, size * 0.44
    circle(d, c, c, r, WHITE, outline=BLACK)
    d.ellipse((c - r, c - r, c + r, c + r), outline=BLACK, width=6)
    for h in range(1, 13):
        a = math.radians(h * 30 - 90)
        text(d, (c + r * 0.8 * math.cos(a), c + r * 0.8 * math.sin(a)), str(h), int(size * 0.07))
    ha = math.radians((hour % 12 + minute / 60) * 30 - 90)
    ma = math.radians(minute * 6 - 90)
    d.line((c, c, c + r * 0.5 * math.cos(ha), c + r * 0.5 * math.sin(ha)), fill=BLACK, width=10)
    d.line((c, c, c + r * 0.72 * math.cos(ma), c + r * 0.72 * math.sin(ma)), fill=BLACK, width=6)
    circle(d, c, c, 8, BLACK)
    return img
