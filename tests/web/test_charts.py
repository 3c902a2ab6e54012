"""The monthly and ledger charts: well-formed, accessible, self-contained SVG carrying the
determination's figures (issue 5)."""

from __future__ import annotations

import re
import subprocess
import xml.etree.ElementTree as ET

import pytest

from qmcredit.web.charts import ledger_chart_svg, ledger_table, monthly_chart_svg, monthly_table
from qmcredit.web.layout import BANDS, EQUIVALENT, FULL_TIME, INK, LEDGER_COLOURS, MUTED

from .conftest import binary, decided, pending_claim

NS = {"s": "http://www.w3.org/2000/svg"}
EXAMPLES = ["01-expansion-cap-carryforward", "03-part-time-equivalents", "04-insurer", "05-ineligible", "06-forfeiture-ama"]


def parse(svg: str) -> ET.Element:
    return ET.fromstring(svg)


@pytest.mark.parametrize("name", EXAMPLES)
def test_monthly_chart_has_36_bars_3_bands_and_titles(name):
    _, det = decided(name)
    d = det.to_dict()
    root = parse(monthly_chart_svg(det))
    bars = root.findall("s:g[@class='bar']", NS)
    assert len(bars) == 36
    for bar, month in zip(bars, d["monthly"]):
        title = bar.find("s:title", NS).text
        assert title.startswith(month["month"]) and month["positions"] in title and month["equivalents"] in title
    bands = [r for r in root.findall("s:rect", NS) if r.get("fill") in BANDS.values()]
    assert len(bands) == 3
    texts = " ".join(t.text for t in root.iter("{http://www.w3.org/2000/svg}text"))
    for label in ("Base period", "Credit year one", "Credit year two"):
        assert label in texts
    for avg in d["average_positions"].values():
        assert f"average {avg}" in texts
    assert len(root.findall("s:g[@class='new_positions']", NS)) == 2
    for k in ("year_one", "year_two"):
        assert f"new: {d['new_positions'][k]}" in texts


def test_charts_are_accessible_and_self_contained():
    _, det = decided("01-expansion-cap-carryforward")
    d = det.to_dict()
    for svg, prefix in ((monthly_chart_svg(det), "qmc-monthly"), (ledger_chart_svg(det), "qmc-ledger")):
        root = parse(svg)
        assert root.get("role") == "img"
        assert root.get("aria-labelledby") == f"{prefix}-title {prefix}-desc"
        assert root.find("s:title", NS).get("id") == f"{prefix}-title"
        assert root.find("s:desc", NS).get("id") == f"{prefix}-desc"
        assert not re.search(r"<script|href=|url\(|@import", svg), "no script and nothing fetched"
    desc = parse(monthly_chart_svg(det)).find("s:desc", NS).text
    assert all(v in desc for v in (*d["average_positions"].values(), *d["new_positions"].values()))
    assert 'id="page-a-title"' in monthly_chart_svg(det, id_prefix="page-a")


def luminance(hex_colour: str) -> float:
    def channel(c: int) -> float:
        c = c / 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4
    r, g, b = (int(hex_colour[i:i + 2], 16) for i in (1, 3, 5))
    return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)


def contrast(a: str, b: str) -> float:
    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def test_colours_meet_wcag_contrast():
    for text in (INK, MUTED):  # WCAG 1.4.3: text 4.5:1, on white and on every band
        for bg in ("#ffffff", *BANDS.values()):
            assert contrast(text, bg) >= 4.5, (text, bg)
    for mark in (FULL_TIME, EQUIVALENT, *LEDGER_COLOURS.values()):  # WCAG 1.4.11: graphics 3:1
        for bg in ("#ffffff", *BANDS.values()):
            assert contrast(mark, bg) >= 3.0, (mark, bg)
    assert contrast(FULL_TIME, EQUIVALENT) >= 1.5  # the stacked parts differ in lightness, not hue alone


@pytest.mark.parametrize("name", ["01-expansion-cap-carryforward", "06-forfeiture-ama"])
def test_ledger_chart_has_five_bars_per_period(name):
    _, det = decided(name)
    d = det.to_dict()
    root = parse(ledger_chart_svg(det))
    bars = root.findall("s:g[@class='ledger_bar']", NS)
    assert len(bars) == 5 * len(d["periods"])
    titles = [b.find("s:title", NS).text for b in bars]
    for p in d["periods"]:
        for k, label in (("room", "room"), ("applied", "applied"), ("refund", "refund"), ("forfeited", "forfeited"),
                         ("carried_forward", "carried forward")):
            assert f"{p['start']} to {p['end']}: {label} {p[k]}" in titles


def test_tables_carry_the_determination_strings():
    _, det = decided("03-part-time-equivalents")
    d = det.to_dict()
    rows = monthly_table(det)
    assert [r["positions"] for r in rows] == [m["positions"] for m in d["monthly"]]
    assert [r["equivalent_hours"] for r in rows] == [m["equivalent_hours"] for m in d["monthly"]]
    assert [r["applied"] for r in ledger_table(d)] == [p["applied"] for p in d["periods"]]


def test_pending_months_and_periods_are_drawn_as_unknown():
    _, det = pending_claim()
    root = parse(monthly_chart_svg(det))
    titles = [g.find("s:title", NS).text for g in root.findall("s:g[@class='bar']", NS)]
    assert sum("not known yet" in t for t in titles) == 9
    assert len(root.findall("s:g[@class='new_positions']", NS)) == 1  # year two's average is not known
    ledger = [g.find("s:title", NS).text for g in parse(ledger_chart_svg(det)).findall("s:g[@class='ledger_bar']", NS)]
    assert any(t.endswith("applied pending") for t in ledger)
    assert [r["full_time"] for r in monthly_table(det)].count("not known") == 9


@pytest.mark.browser
def test_chart_renders_in_headless_chromium(tmp_path):
    exe = binary("chromium")
    _, det = decided("01-expansion-cap-carryforward")
    page = tmp_path / "chart.html"
    page.write_text(f"<!doctype html><html lang=en><title>chart</title><body>{monthly_chart_svg(det)}{ledger_chart_svg(det)}</body></html>")
    shot = tmp_path / "chart.png"
    subprocess.run([exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                    "--disable-background-networking", "--disable-component-update", "--disable-sync",
                    f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1000,900", f"--screenshot={shot}", page.as_uri()],
                   check=True, capture_output=True, timeout=120)
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000
