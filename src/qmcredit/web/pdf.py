"""Form 313 and its worksheet as PDF, with reportlab (issue 5).

``form313_pdf`` lays one privilege period out like the Division of Taxation's Form 313, Parts I to
V (figures from ``form``); ``worksheet_pdf`` is the attachment that shows the work: eligibility
checks, the 36 months, averages and credits, the monthly chart, the ledger and its chart.
All text is real text in the standard Helvetica font, each figure exactly as the determination
writes it, so ``pdftotext`` reads back the determination. Output is deterministic (reportlab's
``invariant`` mode: fixed dates and document id), so the same claim gives the same bytes.
"""

from __future__ import annotations

from io import BytesIO
from xml.sax.saxutils import escape

from reportlab.graphics.shapes import Drawing, Group as RLGroup, Line as RLLine, Rect as RLRect, String
from reportlab.lib import colors
from reportlab.lib.enums import TA_RIGHT
from reportlab.lib.pagesizes import letter
from reportlab.lib.styles import ParagraphStyle
from reportlab.lib.units import inch
from reportlab.platypus import KeepTogether, Paragraph, SimpleDocTemplate, Spacer, Table, TableStyle

from .figures import LEDGER_LABELS, PERIOD_LABELS, as_dict, ledger_table, monthly_table, select_period, shown
from .form import TAX_NAMES, Form313, Part, form_for_period
from .layout import Chart, Group, Line, Rect, Text, ledger_layout, monthly_layout

BODY = ParagraphStyle("body", fontName="Helvetica", fontSize=8.5, leading=10.5)
SMALL = ParagraphStyle("small", parent=BODY, fontSize=7.5, leading=9)
BOLD = ParagraphStyle("bold", parent=BODY, fontName="Helvetica-Bold")
AMOUNT = ParagraphStyle("amount", parent=BODY, fontName="Helvetica-Bold", alignment=TA_RIGHT)
TITLE = ParagraphStyle("title", parent=BODY, fontName="Helvetica-Bold", fontSize=13, leading=16)
FRAME_WIDTH = letter[0] - 1.2 * inch
GRID = colors.HexColor("#808080")
SHADE = colors.HexColor("#e6e6e6")


def _p(text: str, style: ParagraphStyle = BODY) -> Paragraph:
    return Paragraph(escape(text), style)


def _doc(buf: BytesIO, title: str, subject: str, footer: str) -> tuple[SimpleDocTemplate, callable]:
    doc = SimpleDocTemplate(
        buf, pagesize=letter, leftMargin=0.6 * inch, rightMargin=0.6 * inch, topMargin=0.5 * inch,
        bottomMargin=0.6 * inch, title=title, subject=subject, author="qmcredit", creator="qmcredit", invariant=1,
    )

    def on_page(canvas, doc_):
        canvas.saveState()
        canvas.setFont("Helvetica", 7)
        canvas.drawString(0.6 * inch, 0.35 * inch, footer)
        canvas.drawRightString(letter[0] - 0.6 * inch, 0.35 * inch, f"Page {doc_.page}")
        canvas.restoreState()

    return doc, on_page


def _grid(rows, widths, header: bool = True, font_size: float = 7.5) -> Table:
    """A ruled table; the first row is the header when ``header``."""
    cells = [[c if isinstance(c, Paragraph) else _p(str(c), SMALL) for c in row] for row in rows]
    t = Table(cells, colWidths=widths, repeatRows=1 if header else 0)
    style = [("GRID", (0, 0), (-1, -1), 0.4, GRID), ("VALIGN", (0, 0), (-1, -1), "TOP"),
             ("TOPPADDING", (0, 0), (-1, -1), 1.5), ("BOTTOMPADDING", (0, 0), (-1, -1), 1.5),
             ("FONTSIZE", (0, 0), (-1, -1), font_size)]
    if header:
        style.append(("BACKGROUND", (0, 0), (-1, 0), SHADE))
    t.setStyle(TableStyle(style))
    return t


def _part_heading(part: Part) -> Table:
    t = Table([[_p(f"Part {part.number}", ParagraphStyle("ph", parent=BOLD, textColor=colors.white)),
                _p(part.title, ParagraphStyle("pt", parent=BOLD, fontSize=9.5, textColor=colors.white))]],
              colWidths=[0.7 * inch, FRAME_WIDTH - 0.7 * inch])
    t.setStyle(TableStyle([("BACKGROUND", (0, 0), (-1, -1), colors.black), ("VALIGN", (0, 0), (-1, -1), "MIDDLE")]))
    return t


def _form_lines(part: Part) -> Table:
    """The numbered lines of a part: number, text, number again and the boxed amount, as on the form."""
    rows = [[_p(f"{ln.no}." if ln.no else "", BOLD), _p(ln.text), _p(ln.no, SMALL), _p(ln.value, AMOUNT)] for ln in part.lines]
    value_w = 1.9 * inch
    t = Table(rows, colWidths=[0.45 * inch, FRAME_WIDTH - 0.8 * inch - value_w, 0.35 * inch, value_w])
    t.setStyle(TableStyle([("BOX", (3, 0), (3, -1), 0.8, colors.black), ("INNERGRID", (3, 0), (3, -1), 0.5, colors.black),
                           ("LINEBELOW", (1, 0), (1, -1), 0.3, GRID), ("VALIGN", (0, 0), (-1, -1), "BOTTOM"),
                           ("TOPPADDING", (0, 0), (-1, -1), 2.5), ("BOTTOMPADDING", (0, 0), (-1, -1), 2.5)]))
    return t


def _form_header(f: Form313) -> list:
    head = Table([[
        _p("FORM 313", ParagraphStyle("f", parent=TITLE, fontSize=16, leading=19)),
        [_p(f"New Jersey {TAX_NAMES.get(f.tax, f.tax)}", BOLD), _p("Economic Recovery Tax Credit", TITLE),
         _p("N.J.S.A. 52:27BBB-55 (P.L.2002, c.43, s.56)", SMALL)],
        [_p("Privilege / reporting period", SMALL), _p(f.period, BOLD)],
    ]], colWidths=[1.3 * inch, FRAME_WIDTH - 3.3 * inch, 2.0 * inch])
    head.setStyle(TableStyle([("LINEBELOW", (0, 0), (-1, 0), 1.2, colors.black), ("VALIGN", (0, 0), (-1, -1), "MIDDLE")]))
    ident = Table([[_p("Name as shown on return", SMALL), _p("Federal ID number", SMALL)],
                   [_p(f.taxpayer_name or "(no name given)", BOLD), _p(f.taxpayer_id, BOLD)]],
                  colWidths=[FRAME_WIDTH - 2.0 * inch, 2.0 * inch])
    ident.setStyle(TableStyle([("BOX", (0, 0), (-1, -1), 0.6, colors.black), ("INNERGRID", (0, 0), (-1, -1), 0.3, GRID),
                               ("TOPPADDING", (0, 0), (-1, -1), 1), ("BOTTOMPADDING", (0, 0), (-1, -1), 2)]))
    out = [head, Spacer(1, 4), ident, Spacer(1, 4),
           _p("Prepared from the qmcredit determination of this claim; laid out like the Division of Taxation's Form 313. "
              "Attach the worksheet, which shows the monthly positions behind every figure.", SMALL)]
    if not f.eligible:
        out += [Spacer(1, 4), _p("The taxpayer does not qualify for this credit: " + "; ".join(f.ineligible_because),
                                 ParagraphStyle("inel", parent=BOLD, textColor=colors.HexColor("#9b1c1c")))]
    return out


def form313_pdf(claim, det, period: int | str) -> bytes:
    """Form 313 for one privilege period of ``det`` (a ``Determination``), chosen by index into its
    periods or by the year (``YYYY``) in which the period ends; raises ``PeriodNotFound`` naming the periods."""
    f = form_for_period(claim, det, select_period(det, period))
    buf = BytesIO()
    doc, on_page = _doc(buf, f"Form 313, {f.taxpayer_name}, {f.period}", "Economic Recovery Tax Credit",
                        f"Form 313 - {f.taxpayer_name} ({f.taxpayer_id}) - period {f.period}")
    story = _form_header(f)
    for part in f.parts:
        block = [Spacer(1, 8), _part_heading(part), Spacer(1, 3)]
        if part.lines and part.number != "V":
            block.append(_form_lines(part))
        if part.note:
            block.append(_p(part.note, SMALL))
        if part.table:
            n = len(part.table[0])
            first = 2.5 * inch if part.number == "V" else FRAME_WIDTH / n
            widths = [first] + [(FRAME_WIDTH - first) / (n - 1)] * (n - 1) if part.number in ("V", "II") else _check_widths(n)
            block += [Spacer(1, 3), _grid(part.table, widths)]
        if part.lines and part.number == "V":
            block += [Spacer(1, 3), _form_lines(part)]
        story.append(KeepTogether(block))
    doc.build(story, onFirstPage=on_page, onLaterPages=on_page)
    return buf.getvalue()


def _check_widths(n: int) -> list[float]:
    """Part I's table of eligibility checks: rule, cite, condition, result, why."""
    fixed = [0.4 * inch, 1.1 * inch, 2.4 * inch, 0.6 * inch]
    return fixed[:n - 1] + [FRAME_WIDTH - sum(fixed[:n - 1])] if n == 5 else [FRAME_WIDTH / n] * n


def chart_drawing(chart: Chart, width: float = FRAME_WIDTH) -> Drawing:
    """A chart of ``layout`` drawn with reportlab graphics, scaled to ``width`` points."""
    s = width / chart.width
    g = RLGroup()

    def add(shape):
        if isinstance(shape, Group):
            for c in shape.children:
                add(c)
        elif isinstance(shape, Rect):
            dash = [float(x) for x in shape.dash.split()] if shape.dash else None
            g.add(RLRect(shape.x, chart.height - shape.y - shape.h, shape.w, max(shape.h, 0),
                         fillColor=colors.HexColor(shape.fill) if shape.fill else None,
                         strokeColor=colors.HexColor(shape.stroke) if shape.stroke else None,
                         strokeWidth=0.8 if shape.stroke else 0, strokeDashArray=dash))
        elif isinstance(shape, Line):
            dash = [float(x) for x in shape.dash.split()] if shape.dash else None
            g.add(RLLine(shape.x1, chart.height - shape.y1, shape.x2, chart.height - shape.y2,
                         strokeColor=colors.HexColor(shape.stroke), strokeWidth=shape.width, strokeDashArray=dash))
        elif isinstance(shape, Text):
            g.add(String(shape.x, chart.height - shape.y, shape.text, fontSize=shape.size,
                         fontName="Helvetica-Bold" if shape.bold else "Helvetica",
                         textAnchor=shape.anchor, fillColor=colors.HexColor(shape.fill)))

    for shape in chart.shapes:
        add(shape)
    g.scale(s, s)
    drawing = Drawing(width, chart.height * s)
    drawing.add(g)
    return drawing


def _heading(text: str) -> list:
    return [Spacer(1, 10), _p(text, ParagraphStyle("h", parent=BOLD, fontSize=10.5, leading=13)), Spacer(1, 3)]


def worksheet_pdf(claim, det) -> bytes:
    """The worksheet to attach to the return: eligibility checks (E1-E5), the three measured
    periods (W1-W3), the 36 months (P2-P5) with the chart, averages, new positions and credits
    (C1-C3), and the ledger of every privilege period (L1-L5, R1) with its chart and Part IV lines."""
    d = as_dict(det)
    tp, loc = claim.taxpayer, claim.header.location
    buf = BytesIO()
    doc, on_page = _doc(buf, f"Form 313 worksheet, {tp.name}", "Economic Recovery Tax Credit worksheet",
                        f"Form 313 worksheet - {tp.name} ({tp.id})")
    story = [
        _p("Worksheet for Form 313: Economic Recovery Tax Credit", TITLE),
        _p("N.J.S.A. 52:27BBB-55; figures from the qmcredit determination of the claim.", SMALL), Spacer(1, 6),
        _grid([["Taxpayer", f"{tp.name} ({tp.id})"], ["Tax", TAX_NAMES.get(tp.tax, tp.tax)],
               ["Location", f"{loc.address}, {loc.municipality}".strip(", ")],
               ["Operations began", loc.operations_began.isoformat() + (f" ({loc.operations_source})" if loc.operations_source else "")],
               ["Eligible", "yes" if d["eligible"] else "NO: " + "; ".join(f"{r['rule']}: {r['message']}" for r in d["ineligible_because"])]],
              [1.4 * inch, FRAME_WIDTH - 1.4 * inch], header=False),
        *_heading("Eligibility (rules E1-E5)"),
        _grid([("Rule", "Cite", "Condition", "Result", "Why"),
               *((c["rule"], c["cite"], c["condition"], "passed" if c["passed"] else "FAILED", c["message"]) for c in d.get("checks", []))],
              _check_widths(5)),
        *_heading("Measured periods (rules W1-W3) and credits (C1-C3)"),
        _grid([("Period", "From", "To", "Average positions", "New full-time positions", "Credit"),
               *((PERIOD_LABELS[k], d["windows"][k]["start"], d["windows"][k]["end"], shown(d["average_positions"][k]),
                  "" if k == "base" else shown(d["new_positions"][k]), "" if k == "base" else shown(d["credit"][k]))
                 for k in ("base", "year_one", "year_two"))],
              [1.3 * inch] + [(FRAME_WIDTH - 1.3 * inch) / 5] * 5),
        Spacer(1, 3),
        _p(f"Sustained effort ratio (C3): {shown(d['sustained_effort_ratio'])}. Refund (R1): {shown(d.get('refund'))}. "
           f"Carried forward after the last period: {shown(d.get('carried_forward'))}.", BODY),
        *_heading("Positions month by month (rules P2-P5; equivalents = part-time hours / 140)"),
        _grid([("Month", "Period", "Full-time positions", "Part-time hours", "Full-time equivalents", "Positions"),
               *((r["month"], r["period_label"], r["full_time"], r["equivalent_hours"], r["equivalents"], r["positions"])
                 for r in monthly_table(d))],
              [0.9 * inch, 1.4 * inch] + [(FRAME_WIDTH - 2.3 * inch) / 4] * 4, font_size=7),
        *_heading("The monthly chart"),
        chart_drawing(monthly_layout(d)),
        *_heading("Ledger by privilege period (rules L1-L5, R1)"),
        _grid([("Period", *(LEDGER_LABELS[k] for k in ("allowed", "room", "applied", "refund", "forfeited", "carried_forward"))),
               *((r["period"], r["allowed"], r["room"], r["applied"], r["refund"], r["forfeited"], r["carried_forward"]) for r in ledger_table(d))],
              [1.5 * inch] + [(FRAME_WIDTH - 1.5 * inch) / 6] * 6),
        *_heading("Room of each period (Form 313 Part IV, rules L2-L3)"),
        _grid([("Period", "Liability", "50% of liability", "Floor", "Above floor", "Other credits before", "Room"),
               *((f"{p['start']} to {p['end']}", *(shown(p.get('detail', {}).get(k), "n/a") for k in
                  ("liability", "cap_50_percent", "floor", "liability_above_floor", "other_credits_before")), p["room"])
                 for p in d["periods"])],
              [1.5 * inch] + [(FRAME_WIDTH - 1.5 * inch) / 6] * 6),
        *_heading("Carryover by year of origin (Form 313 Part V, rules L4-L5, R1)"),
        _grid([("Period", "Origin", "Opening", "Allowed", "Applied", "Refund", "Forfeited", "Closing"),
               *((f"{p['start']} to {p['end']}", PERIOD_LABELS[o], v["opening"], v["allowed"], v["applied"], v["refund"], v["forfeited"], v["closing"])
                 for p in d["periods"] for o, v in p.get("detail", {}).get("origins", {}).items())],
              [1.5 * inch, 1.1 * inch] + [(FRAME_WIDTH - 2.6 * inch) / 6] * 6),
        KeepTogether([*_heading("The ledger chart"), chart_drawing(ledger_layout(d))]),
    ]
    notes = [*d.get("warnings", []), *(f"{PERIOD_LABELS[o]} credit {v['amount']} is allowed for the period containing "
                                       f"{v['allowed_for_period_containing']}, which the claim does not give: not yet applied"
                                       for o, v in (d.get("not_yet_applied") or {}).items())]
    if (d.get("pending") or {}).get("as_of"):
        notes.append(f"Payroll known up to {d['pending']['as_of']}: figures shown as pending are not decided yet.")
    notes += [f"The period containing {m['containing']} (credit year one's last day) is not given: figures shown as pending are not decided (V2)."
              for m in (d.get("pending") or {}).get("missing_periods", [])]
    if notes:
        story += [*_heading("Notes"), *(_p(f"- {n}") for n in notes)]
    doc.build(story, onFirstPage=on_page, onLaterPages=on_page)
    return buf.getvalue()
