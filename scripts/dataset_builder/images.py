"""Every image of the dataset: file name -> recipe. Derived images (task robustness) reuse a source recipe."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from pathlib import Path

from PIL import Image, ImageEnhance, ImageFilter

from . import draw as D
from .draw import BLACK, COLORS, WHITE

C = COLORS


def shapes() -> Image.Image:
    img, d = D.canvas(512, 512)
    D.circle(d, 130, 150, 80, C["red"])
    D.square(d, 380, 150, 80, C["blue"])
    D.triangle(d, 256, 390, 100, C["green"])
    return img


def red_blue_circles() -> Image.Image:
    img, d = D.canvas(512, 384)
    for i, (x, y) in enumerate(D.scatter(2, 5, 512, 384, 60, 110)):
        D.circle(d, x, y, 42, C["red"] if i < 3 else C["blue"])
    return img


def green_squares() -> Image.Image:
    img, d = D.canvas(512, 512, (245, 245, 235))
    for x, y in D.scatter(3, 7, 512, 512, 50, 105):
        D.square(d, x, y, 32, C["green"])
    return img


def mountain_4k() -> Image.Image:
    w, h = 3840, 2160
    img, d = D.canvas(w, h)
    for y in range(0, int(h * 0.6), 8):  # sky gradient
        t = y / (h * 0.6)
        d.rectangle((0, y, w, y + 8), fill=(int(90 + 120 * t), int(150 + 80 * t), 235))
    d.polygon(
        [
            (0, 1500),
            (900, 700),
            (1500, 1200),
            (2300, 520),
            (3100, 1150),
            (3840, 800),
            (3840, 2160),
            (0, 2160),
        ],
        fill=(95, 105, 120),
    )
    d.polygon([(2300, 520), (2080, 760), (2200, 720), (2300, 800), (2420, 700), (2520, 740)], fill=WHITE)
    d.rectangle((0, 1750, w, h), fill=(70, 140, 70))
    D.circle(d, 600, 380, 170, C["red"])
    D.text(d, (w / 2, 1950), "SUMMIT", 260, WHITE)
    return img


def house() -> Image.Image:
    img, d = D.canvas(512, 384, C["sky"])
    d.rectangle((0, 300, 512, 384), fill=C["green"])
    d.rectangle((150, 190, 310, 310), fill=C["orange"])
    d.polygon([(130, 190), (230, 110), (330, 190)], fill=C["red"])
    d.rectangle((210, 250, 250, 310), fill=C["brown"])
    d.rectangle((380, 210, 400, 305), fill=C["brown"])
    D.circle(d, 390, 180, 45, (40, 130, 50))
    D.circle(d, 70, 70, 40, C["yellow"])
    return img


def login_screen() -> Image.Image:
    img, d = D.canvas(360, 640, (243, 245, 250))
    D.text(d, (180, 90), "Sign in", 36)
    D.field(d, (40, 200, 320, 250), "Email", "you@example.com")
    D.field(d, (40, 300, 320, 350), "Password", "********")
    D.button(d, (40, 400, 320, 456), "Log In", C["blue"])
    D.text(d, (180, 500), "Forgot password?", 18, C["blue"])
    return img


def settings_screen() -> Image.Image:
    img, d = D.canvas(360, 480, WHITE)
    D.text(d, (180, 50), "Settings", 32)
    for i, (label, on) in enumerate([("Wi-Fi", True), ("Bluetooth", False), ("Airplane mode", False)]):
        y = 130 + i * 90
        D.text(d, (30, y + 18), label, 24, anchor="lm")
        D.toggle(d, 260, y, on)
        d.line((20, y + 62, 340, y + 62), fill=(220, 220, 220), width=2)
    return img


def receipt() -> Image.Image:
    img, d = D.canvas(360, 520, (252, 250, 240))
    D.text(d, (180, 50), "CORNER CAFE", 30)
    items = [("Coffee", "3.50"), ("Bagel", "2.25"), ("Orange juice", "4.00")]
    for i, (name, price) in enumerate(items):
        y = 130 + i * 50
        D.text(d, (30, y), name, 24, anchor="lm")
        D.text(d, (330, y), price, 24, anchor="rm")
    d.line((30, 290, 330, 290), fill=BLACK, width=2)
    D.text(d, (30, 330), "TOTAL", 28, anchor="lm")
    D.text(d, (330, 330), "9.75", 28, anchor="rm")
    D.text(d, (180, 440), "Thank you!", 22)
    return img


def traffic_light() -> Image.Image:
    img, d = D.canvas(256, 512, (200, 220, 235))
    d.rounded_rectangle((68, 40, 188, 420), radius=20, fill=(40, 40, 40))
    d.rectangle((118, 420, 138, 512), fill=(60, 60, 60))
    for i, col in enumerate(["red", "yellow", "green"]):
        lit = i == 0
        D.circle(d, 128, 105 + i * 125, 45, C[col] if lit else (70, 70, 70))
    return img


def solid(color: str, w: int, h: int) -> Callable[[], Image.Image]:
    return lambda: Image.new("RGB", (w, h), C[color])


def banner() -> Image.Image:
    img, d = D.canvas(2000, 50)
    D.text(d, (1000, 25), "WELCOME TO THE LAB", 36)
    return img


def hexagon() -> Image.Image:
    img, d = D.canvas(384, 384)
    D.polygon(d, 192, 192, 140, 6, C["purple"])
    return img


def triangles_circles() -> Image.Image:
    img, d = D.canvas(640, 400)
    for i, (x, y) in enumerate(D.scatter(23, 10, 640, 400, 50, 100)):
        (D.triangle if i < 4 else D.circle)(d, x, y, 38, C["orange"] if i < 4 else C["blue"])
    return img


def stripes() -> Image.Image:
    img, d = D.canvas(512, 256)
    for i, col in enumerate(["red", "green", "blue", "yellow"]):
        d.rectangle((i * 128, 0, i * 128 + 127, 256), fill=C[col])
    return img


def sun_grass() -> Image.Image:
    img, d = D.canvas(512, 384, C["sky"])
    d.rectangle((0, 280, 512, 384), fill=C["green"])
    D.circle(d, 256, 130, 70, C["yellow"])
    return img


def progress_bar() -> Image.Image:
    img, d = D.canvas(480, 200)
    D.text(d, (240, 50), "Downloading update", 26)
    d.rounded_rectangle((40, 95, 440, 135), radius=10, fill=(225, 225, 225))
    d.rounded_rectangle((40, 95, 340, 135), radius=10, fill=C["green"])
    D.text(d, (240, 165), "75%", 26)
    return img


def rain_icon() -> Image.Image:
    img, d = D.canvas(320, 320)
    for cx, cy, r in ((120, 130, 55), (180, 110, 65), (230, 140, 45)):
        D.circle(d, cx, cy, r, C["grey"])
    d.rectangle((80, 140, 250, 185), fill=C["grey"])
    for x in (100, 150, 200, 250):
        d.line((x, 210, x - 15, 260), fill=C["blue"], width=8)
    return img


def stars() -> Image.Image:
    img, d = D.canvas(512, 384, (20, 30, 70))
    for x, y in D.scatter(32, 5, 512, 384, 55, 120):
        D.star(d, x, y, 40, C["yellow"])
    return img


def people_table() -> Image.Image:
    img, d = D.canvas(420, 300)
    rows = [("Name", "Age", "City"), ("Alice", "28", "Oslo"), ("Bob", "34", "Lima"), ("Chen", "41", "Pune")]
    for i, cells in enumerate(rows):
        y = 40 + i * 60
        for j, cell in enumerate(cells):
            d.rectangle(
                (20 + j * 127, y, 147 + j * 127, y + 60),
                outline=BLACK,
                width=2,
                fill=(230, 230, 230) if i == 0 else WHITE,
            )
            D.text(d, (83 + j * 127, y + 30), cell, 24)
    return img


def boxes_abc() -> Image.Image:
    img, d = D.canvas(600, 260)
    for i, (lab, col) in enumerate([("A", "red"), ("B", "green"), ("C", "blue")]):
        x = 100 + i * 200
        d.rectangle((x - 70, 60, x + 70, 200), fill=C[col])
        D.text(d, (x, 230), lab, 28)
    return img


def menu() -> Image.Image:
    return D.text_card(400, 320, ["MENU", "Pizza  $8", "Salad  $6", "Soup  $4"], 34, (255, 248, 230))


def calendar_page() -> Image.Image:
    img, d = D.canvas(360, 400)
    d.rectangle((0, 0, 360, 90), fill=C["red"])
    D.text(d, (180, 45), "MARCH", 40, WHITE)
    D.text(d, (180, 180), "14", 110)
    D.text(d, (180, 320), "Dentist 10:00", 30)
    return img


def sized_circles() -> Image.Image:
    img, d = D.canvas(600, 300)
    for lab, x, r in (("A", 110, 45), ("B", 300, 100), ("C", 490, 65)):
        D.circle(d, x, 140, r, C["purple"])
        D.text(d, (x, 270), lab, 28)
    return img


def shapes_yellow_circle() -> Image.Image:
    img, d = D.canvas(600, 260)
    D.square(d, 110, 130, 70, C["red"])
    D.circle(d, 300, 130, 75, C["yellow"])
    D.triangle(d, 490, 140, 85, C["blue"])
    return img


def rotate(src: str, deg: int) -> Callable[[], Image.Image]:
    return lambda: load(src).rotate(deg, expand=True, fillcolor=WHITE)


def blur(src: str, radius: float) -> Callable[[], Image.Image]:
    return lambda: load(src).filter(ImageFilter.GaussianBlur(radius))


def overexpose(src: str, factor: float) -> Callable[[], Image.Image]:
    return lambda: ImageEnhance.Brightness(load(src)).enhance(factor)


IMAGES: dict[str, Callable[[], Image.Image]] = {
    "IMG-001.png": shapes,
    "IMG-002.png": red_blue_circles,
    "IMG-003.png": green_squares,
    "IMG-004.png": lambda: D.text_card(512, 256, ["OPEN 24 HOURS"], 48, C["yellow"], BLACK, BLACK),
    "IMG-005.png": lambda: D.text_card(512, 320, ["Meeting at 3:30 PM", "Room 204"], 40),
    "IMG-006.jpg": mountain_4k,
    "IMG-007.png": house,
    "IMG-008.png": lambda: D.bar_chart(
        "Visitors per day", ["Mon", "Tue", "Wed", "Thu"], [12, 18, 9, 15], C["blue"]
    ),
    "IMG-009.png": lambda: D.pie_chart(
        "Monthly budget",
        [("Rent", 40, "red"), ("Food", 25, "green"), ("Transport", 20, "blue"), ("Other", 15, "grey")],
    ),
    "IMG-010.png": login_screen,
    "IMG-011.png": settings_screen,
    "IMG-012.png": receipt,
    "IMG-013.png": lambda: D.qr_like(13),
    "IMG-014.png": traffic_light,
    "IMG-015.png": solid("blue", 16, 16),
    "IMG-016.png": banner,
    "IMG-017.png": rotate("IMG-004.png", 90),
    "IMG-018.png": blur("IMG-002.png", 6),
    "IMG-019.png": overexpose("IMG-001.png", 1.8),
    "IMG-020.jpg": lambda: load("IMG-012.png"),  # saved at JPEG quality 12, see QUALITY
    "IMG-021.png": rotate("IMG-008.png", 180),
    "IMG-022.png": hexagon,
    "IMG-023.png": triangles_circles,
    "IMG-024.png": lambda: D.text_card(480, 160, ["KX7 4PQ"], 64, (250, 220, 40), BLACK, BLACK),
    "IMG-025.png": stripes,
    "IMG-026.png": lambda: D.line_chart(
        "Average temperature (C)", ["Jan", "Feb", "Mar", "Apr", "May", "Jun"], [2, 4, 9, 14, 18, 22]
    ),
    "IMG-027.png": lambda: D.clock(3, 0),
    "IMG-028.png": lambda: D.text_card(400, 240, ["SALE", "$19.99"], 56, WHITE, C["red"], C["red"]),
    "IMG-029.png": sun_grass,
    "IMG-030.png": progress_bar,
    "IMG-031.png": rain_icon,
    "IMG-032.png": stars,
    "IMG-033.png": solid("white", 512, 512),
    "IMG-034.png": people_table,
    "CMB-005.png": lambda: D.clock(7, 30),
    "CMB-006.png": boxes_abc,
    "CMB-008.png": menu,
    "CMB-010.png": calendar_page,
    "CMB-020.png": sized_circles,
    "CMB-026.png": shapes_yellow_circle,
}
QUALITY = {"IMG-006.jpg": 70, "IMG-020.jpg": 12}


@cache
def load(name: str) -> Image.Image:
    """Render (once) the image called `name`; derived recipes call this for their source."""
    return IMAGES[name]()


def write_all(out_dir: Path) -> list[Path]:
    """Write every image; PNG and JPEG encoders are deterministic for a given Pillow version."""
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for name in IMAGES:
        path = out_dir / name
        img = load(name)
        if name.endswith(".jpg"):
            img.save(path, "JPEG", quality=QUALITY.get(name, 85), optimize=True)
        else:
            img.save(path, "PNG", optimize=True)
        paths.append(path)
    return paths
