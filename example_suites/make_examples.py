"""Render the documents of the example suites (receipts, plates, pages) with their ground truth.

The rendered files are committed; this script is how they were made, and how to change them. It is deterministic:
fixed texts, fixed fonts, and every random degradation drawn from a generator seeded per document, so running it
again on a machine with the same fonts reproduces the same files.

Run from the repository root (developer machines only; tests never run it)::

    apt-get install fonts-dejavu-core fonts-wqy-microhei   # DejaVu (free), WenQuanYi Micro Hei (free, CJK)
    python example_suites/make_examples.py

Fonts: DejaVu (Bitstream Vera license, free) for Latin text; WenQuanYi Micro Hei (Apache-2.0 / GPLv3) for the
Chinese licence plates. Set ``OCR_EXAMPLE_FONT_DIRS`` (``:``-separated) to look for the font files elsewhere.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw, ImageFilter, ImageFont

HERE = Path(__file__).resolve().parent
FONT_DIRS = [
    *[Path(p) for p in os.environ.get("OCR_EXAMPLE_FONT_DIRS", "").split(":") if p],
    Path("/usr/share/fonts/truetype/dejavu"),
    Path("/usr/share/fonts/truetype/wqy"),
    Path("/usr/share/fonts/dejavu"),
    Path("/usr/share/fonts/wenquanyi/wqy-microhei"),
    Path("/Library/Fonts"),
    Path.home() / "Library" / "Fonts",
    Path.home() / ".local" / "share" / "fonts",
]
INSTALL_FONTS = "apt-get install fonts-dejavu-core fonts-wqy-microhei"


def font(file_name: str, size: int) -> ImageFont.FreeTypeFont:
    """A TrueType font by file name from :data:`FONT_DIRS`; a clear error with the install command otherwise."""
    for folder in FONT_DIRS:
        path = folder / file_name
        if path.is_file():
            return ImageFont.truetype(str(path), size)
    raise SystemExit(f"font {file_name} not found in {', '.join(map(str, FONT_DIRS))}: {INSTALL_FONTS}")


def save_png(image: Image.Image, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    image.save(path, format="PNG", optimize=True)


# -- degradations (all seeded) ----------------------------------------------------------------------------------------
def blur(image: Image.Image, radius: float) -> Image.Image:
    return image.filter(ImageFilter.GaussianBlur(radius))


def speckle(image: Image.Image, rng: random.Random, share: float) -> Image.Image:
    """Salt-and-pepper noise on ``share`` of the pixels (dark specks and white holes, like a poor thermal print)."""
    image = image.copy()
    pixels = image.load()
    width, height = image.size
    for _ in range(int(width * height * share)):
        x, y = rng.randrange(width), rng.randrange(height)
        dark = rng.random() < 0.6
        value = rng.randrange(0, 90) if dark else rng.randrange(200, 256)
        pixels[x, y] = value if image.mode == "L" else (value, value, value)
    return image


def rotate(image: Image.Image, degrees: float) -> Image.Image:
    fill = 255 if image.mode == "L" else (255, 255, 255)
    return image.rotate(degrees, resample=Image.Resampling.BICUBIC, expand=True, fillcolor=fill)


def degrade(image: Image.Image, steps: list[tuple[str, float]], seed: int) -> Image.Image:
    rng = random.Random(seed)
    for kind, amount in steps:
        if kind == "blur":
            image = blur(image, amount)
        elif kind == "speckle":
            image = speckle(image, rng, amount)
        elif kind == "rotate":
            image = rotate(image, amount)
        else:
            raise ValueError(kind)
    return image


# -- receipts (format 1: ground_truth.json + images/) ------------------------------------------------------------------
@dataclass(frozen=True)
class Receipt:
    company: str
    address: tuple[str, ...]
    phone: str
    date: str
    time: str
    number: str
    items: tuple[tuple[str, int, str], ...]  # name, quantity, unit price
    vat_rate: int
    paid: str  # "Card" or a cash amount

    def money(self) -> tuple[list[tuple[str, str]], str, str]:
        lines = []
        subtotal = 0
        for name, quantity, price in self.items:
            cents = quantity * round(float(price) * 100)
            subtotal += cents
            lines.append((f"{quantity} {name}", f"{cents / 100:.2f}"))
        vat = round(subtotal * self.vat_rate / (100 + self.vat_rate))
        return lines, f"{vat / 100:.2f}", f"{subtotal / 100:.2f}"


RECEIPTS = [
    Receipt("SUNRISE BAKERY", ("12 Harbour Road", "Brighton BN1 3AX"), "023 9284 1177", "14/03/2024", "09:41",
            "10482", (("Sourdough Loaf", 1, "4.20"), ("Croissant", 3, "1.80"), ("Flat White", 2, "3.10")), 20, "20.00"),
    Receipt("GREEN LEAF GROCER", ("48 Market Street", "Leeds LS1 6DT"), "0113 496 0321", "02/05/2024", "17:05",
            "55310", (("Apples 1kg", 1, "2.85"), ("Basmati Rice", 2, "3.49"), ("Olive Oil", 1, "6.75"),
                      ("Free Range Eggs", 1, "3.20"), ("Tomatoes", 4, "0.65")), 5, "Card"),
    Receipt("HARBOUR HARDWARE", ("7 Quay Lane", "Bristol BS1 4RL"), "0117 925 6643", "21/11/2023", "11:26",
            "20977", (("Wood Screws 50", 2, "4.95"), ("Claw Hammer", 1, "12.49"), ("Masking Tape", 3, "2.30")),
            20, "40.00"),
    Receipt("CAFE AURORA", ("3 Castle Square", "Cardiff CF10 1BT"), "029 2038 7710", "08/01/2024", "13:52",
            "7731", (("Soup of the Day", 2, "5.50"), ("Cheese Toastie", 1, "6.25"), ("Lemonade", 2, "2.75")),
            20, "Card"),
    Receipt("NORTHSIDE PHARMACY", ("120 Hill Road", "Glasgow G12 8QQ"), "0141 334 9021", "30/06/2024", "10:08",
            "88214", (("Hand Cream", 1, "4.99"), ("Vitamin C 60", 1, "7.45"), ("Plasters", 2, "2.19")), 20,
            "20.00"),
    Receipt("BLUE DOOR BOOKS", ("25 Bridge Street", "Hull HU1 2DA"), "01904 612 558", "17/09/2023", "15:33",
            "4096", (("Paperback Novel", 2, "8.99"), ("Notebook A5", 1, "4.50"), ("Bookmark", 3, "1.25")), 0,
            "Card"),
]

RECEIPT_WIDTH = 520
RECEIPT_DEGRADED = [  # (variant of receipt number, suffix, degradation steps, relaxed per-document thresholds)
    (1, "blur", [("blur", 1.3)], {"cer": 0.15, "field_f1": 0.25}),
    (3, "noise", [("speckle", 0.015)], {"cer": 0.15, "field_f1": 0.25}),
    (5, "rotated", [("rotate", 2.0)], {"cer": 0.15, "field_f1": 0.25}),
]


def receipt_lines(receipt: Receipt) -> list[tuple[str, str, str]]:
    """(kind, left text, right text) per printed line; kind "rule" draws a separator that is not text."""
    items, vat, total = receipt.money()
    lines = [("center", receipt.company, "")]
    lines += [("center", line, "") for line in receipt.address]
    lines += [("center", f"Tel {receipt.phone}", ""), ("rule", "", "")]
    lines += [("split", f"Date {receipt.date}", receipt.time), ("left", f"Receipt No {receipt.number}", ""),
              ("rule", "", "")]
    lines += [("split", left, right) for left, right in items]
    lines += [("rule", "", ""), ("split", "TOTAL", total)]
    if receipt.vat_rate:
        lines.append(("split", f"VAT {receipt.vat_rate}% included", vat))
    if receipt.paid == "Card":
        lines.append(("split", "Paid by Card", total))
    else:
        change = f"{float(receipt.paid) - float(total):.2f}"
        lines += [("split", "Cash", receipt.paid), ("split", "Change", change)]
    lines += [("rule", "", ""), ("center", "Thank you for your visit", "")]
    return lines


def render_receipt(receipt: Receipt) -> tuple[Image.Image, str]:
    regular, bold = font("DejaVuSansMono.ttf", 21), font("DejaVuSansMono-Bold.ttf", 25)
    lines = receipt_lines(receipt)
    line_height, margin = 34, 26
    height = margin * 2 + line_height * len(lines)
    image = Image.new("L", (RECEIPT_WIDTH, height), 255)
    draw = ImageDraw.Draw(image)
    text_lines = []
    y = margin
    for index, (kind, left, right) in enumerate(lines):
        face = bold if index == 0 else regular
        if kind == "rule":
            draw.line((margin, y + line_height // 2, RECEIPT_WIDTH - margin, y + line_height // 2), fill=120, width=1)
        elif kind == "center":
            width = draw.textlength(left, font=face)
            draw.text(((RECEIPT_WIDTH - width) / 2, y), left, font=face, fill=0)
            text_lines.append(left)
        else:
            draw.text((margin, y), left, font=face, fill=0)
            if right:
                width = draw.textlength(right, font=face)
                draw.text((RECEIPT_WIDTH - margin - width, y), right, font=face, fill=0)
            text_lines.append(f"{left} {right}" if right else left)
        y += line_height
    return image, "\n".join(text_lines)


def make_receipts(folder: Path) -> None:
    ground_truth: dict[str, Any] = {}
    rendered = {}
    for number, receipt in enumerate(RECEIPTS, start=1):
        image, text = render_receipt(receipt)
        name = f"receipt_{number:02d}.png"
        rendered[number] = (image, text)
        save_png(image, folder / "images" / name)
        _, _, total = receipt.money()
        ground_truth[name] = {
            "full_text": text,
            # the address as printed: its two lines joined by a space (the default field comparison is
            # str(v).strip().lower(), so a comma the receipt does not show would be a misread)
            "fields": {"company": receipt.company, "address": " ".join(receipt.address), "date": receipt.date,
                       "total": total},
            "tags": ["clean"],
        }
    for number, suffix, steps, thresholds in RECEIPT_DEGRADED:
        image, text = rendered[number]
        name = f"receipt_{number:02d}_{suffix}.png"
        save_png(degrade(image, steps, seed=1000 + number), folder / "images" / name)
        entry = dict(ground_truth[f"receipt_{number:02d}.png"])
        ground_truth[name] = {**entry, "tags": ["degraded", suffix], "thresholds": thresholds}
    (folder / "ground_truth.json").write_text(
        json.dumps(dict(sorted(ground_truth.items())), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


# -- licence plates (format 2: a label file) ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Plate:
    text: str
    style: str  # "eu" (white, black text), "uk_rear" (yellow), "us" (white, dark blue text), "cn" (blue, white text)
    degrade: list[tuple[str, float]] = field(default_factory=list)


PLATES = [
    Plate("AB12 CDE", "uk_rear"),
    Plate("M ZK 4071", "eu"),
    Plate("7KPW281", "us"),
    Plate("HR 58 TX", "eu"),
    Plate("LV58 XTR", "uk_rear"),
    Plate("京A12345", "cn"),
    Plate("沪B6789C", "cn"),
    Plate("苏E5U701", "cn"),
    Plate("GT 306 RS", "eu", [("blur", 1.1)]),
    Plate("DM 8240 AX", "us", [("rotate", 2.5), ("speckle", 0.008)]),
]
CN_PROVINCE_KERNING = 8  # pixels: the province character sits close to the letter, as on real plates

PLATE_STYLES = {
    "eu": ((255, 255, 255), (20, 20, 20)),
    "uk_rear": ((250, 204, 30), (20, 20, 20)),
    "us": ((245, 245, 240), (25, 40, 110)),
    "cn": ((20, 60, 170), (255, 255, 255)),
}


def render_plate(plate: Plate, seed: int) -> Image.Image:
    background, ink = PLATE_STYLES[plate.style]
    face = font("wqy-microhei.ttc", 56) if plate.style == "cn" else font("DejaVuSans-Bold.ttf", 58)
    probe = ImageDraw.Draw(Image.new("RGB", (1, 1)))
    left, top, right, bottom = probe.textbbox((0, 0), plate.text, font=face)
    pad_x, pad_y, border = 30, 18, 5
    width, height = right - left + 2 * pad_x, bottom - top + 2 * pad_y
    if plate.style == "cn":
        width -= CN_PROVINCE_KERNING
    canvas = Image.new("RGB", (width + 40, height + 40), (200, 200, 200))  # a little bumper around the plate
    draw = ImageDraw.Draw(canvas)
    draw.rounded_rectangle((20, 20, 20 + width, 20 + height), radius=10, fill=background, outline=(30, 30, 30),
                           width=border)
    x, y = 20 + pad_x - left, 20 + pad_y - top
    if plate.style == "cn":
        draw.text((x, y), plate.text[0], font=face, fill=ink)
        x += draw.textlength(plate.text[0], font=face) - CN_PROVINCE_KERNING
        draw.text((x, y), plate.text[1:], font=face, fill=ink)
    else:
        draw.text((x, y), plate.text, font=face, fill=ink)
    return degrade(canvas, plate.degrade, seed=seed) if plate.degrade else canvas


def make_plates(folder: Path) -> None:
    lines = []
    for number, plate in enumerate(PLATES, start=1):
        name = f"images/plate_{number:02d}.png"
        save_png(render_plate(plate, seed=2000 + number), folder / name)
        lines.append(f"{name}\t{plate.text}")
    (folder / "labels.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")


# -- pages (format 3: images with .gt.txt sidecars) --------------------------------------------------------------------
PAGES = [  # (font file, size, title, paragraphs); a paragraph that is a list keeps its lines as they are
    ("DejaVuSerif.ttf", 23, "Reading machines", [
        "Optical character recognition turns pictures of text into text that a computer can search, copy and "
        "check. A scanner or a camera produces the picture; the recognition engine finds the lines, cuts them "
        "into words and decides which letters it sees. Every step can go wrong a little, and small errors add up "
        "when thousands of pages pass through the same pipeline every day. A page that was read well last month "
        "may be read badly after an update of the engine, the model or the image pipeline in front of it, and "
        "nobody notices until a customer complains.",
    ]),
    ("DejaVuSans.ttf", 22, "Measuring errors", [
        "The character error rate counts the insertions, deletions and substitutions needed to turn the output "
        "into the reference, divided by the length of the reference. A rate of two percent means about one wrong "
        "character in fifty. The word error rate does the same for whole words, so a single wrong letter spoils "
        "the entire word that holds it. Both rates can exceed one hundred percent when the engine invents text "
        "that is not on the page at all.",
    ]),
    ("DejaVuSansMono.ttf", 20, "Release checklist", [[
        "Run the OCR suite on every pull request.",
        "Compare the scores with the last release.",
        "Stop the merge when the error rate grows by more than 0.5 points.",
        "Keep the ground truth under version control next to the tests.",
        "Add a document to the suite for every bug report about a misread page.",
        "Review the worst documents of each run before you relax a threshold.",
        "Record the engine version and settings with every result.",
    ]]),
    ("DejaVuSerif.ttf", 21, "A note on test data", [
        "Good test documents look like the documents users really send: receipts with faded print, forms with "
        "stamps, letters photographed at an angle. Synthetic pages such as this one are easy to make and easy to "
        "share, which makes them a fine smoke test, but they are no substitute for a sample of real traffic with "
        "carefully checked transcriptions. Start small, with twenty documents that matter, and grow the sample "
        "whenever a real failure shows a kind of page the suite did not have yet.",
    ]),
]
PAGE_WIDTH = 1000


def render_page(font_file: str, size: int, title: str, paragraphs: list[str | list[str]]) -> tuple[Image.Image, str]:
    body, heading = font(font_file, size), font(font_file.replace(".ttf", "-Bold.ttf"), size + 8)
    margin, line_height = 60, int(size * 1.55)
    probe = ImageDraw.Draw(Image.new("L", (1, 1)))
    usable = PAGE_WIDTH - 2 * margin
    lines: list[str] = []
    for paragraph in paragraphs:
        if isinstance(paragraph, list):
            lines += paragraph
            continue
        width = 120
        while width > 10:  # the widest wrap whose lines fit the page
            wrapped = textwrap.wrap(paragraph, width=width)
            if all(probe.textlength(line, font=body) <= usable for line in wrapped):
                break
            width -= 1
        lines += wrapped
    height = margin * 2 + int(line_height * 1.8) + line_height * len(lines)
    image = Image.new("L", (PAGE_WIDTH, height), 255)
    draw = ImageDraw.Draw(image)
    draw.text((margin, margin), title, font=heading, fill=0)
    y = margin + int(line_height * 1.8)
    for line in lines:
        draw.text((margin, y), line, font=body, fill=0)
        y += line_height
    return image, "\n".join([title, ""] + lines)


def make_pages(folder: Path) -> None:
    for number, (font_file, size, title, paragraphs) in enumerate(PAGES, start=1):
        image, text = render_page(font_file, size, title, paragraphs)
        base = folder / f"page_{number:02d}"
        save_png(image.convert("1", dither=Image.Dither.NONE), base.with_suffix(".png"))
        base.with_suffix(".gt.txt").write_text(text + "\n", encoding="utf-8")
    (folder / "page_03.fields.json").write_text(json.dumps({"title": PAGES[2][2]}) + "\n", encoding="utf-8")


def main(root: Path = HERE) -> None:
    """Render every suite's ``data/`` folder under ``root`` (the folder of this script by default)."""
    for suite, make in (("receipts", make_receipts), ("plates", make_plates), ("pages", make_pages)):
        folder = root / suite / "data"
        if folder.exists():
            shutil.rmtree(folder)  # generated entirely by this script: no stale files survive a change
        folder.mkdir(parents=True)
        make(folder)
    total = sum(p.stat().st_size for p in root.rglob("*") if p.is_file() and "data" in p.parts)
    print(f"rendered the example suites: {total / 1024:.0f} KiB of data")


if __name__ == "__main__":
    main()
